/**
 * What every model turn of the coder shares — act's turns and the planning call — so that they
 * send the same prompt prefix (system prompt, tools, history) and the server's KV cache carries
 * over from one to the next.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { toolDefinition, toolsForIntent } from "../../tools/registry.js";
import { ACT_SYSTEM } from "./prompt.js";
import type { NodeEnv } from "../runtime.js";
import type { CoderStateValue } from "../state.js";
import type { TurnRequest } from "./ask.js";
import { learnedScales, rememberScales } from "../history/calibrate.js";

/** How a plan note (the plan node's message after the request) begins. */
export const PLAN_NOTE_HEADER = "[keel] The plan for this request:";

/** The plan as the model sees it in the conversation. */
export const planNote = (steps: string[]) =>
  new HumanMessage({
    content: `${PLAN_NOTE_HEADER}\n${steps.map((s, i) => `${i + 1}. ${s}`).join("\n")}\nWork through it with tool calls.`,
    name: "keel",
  });

/** Index of the message holding this run's request (the newest human message with its text). */
export function requestIndex(state: Pick<CoderStateValue, "messages" | "request">): number {
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i]!;
    if (HumanMessage.isInstance(m) && m.content === state.request) return i;
  }
  return 0;
}

/**
 * The messages a fold keeps (the request and the newest plan note after it), from the positions
 * kept in state; a thread saved before keel kept them is scanned instead.
 */
export function pinsOf(
  state: Pick<CoderStateValue, "messages" | "request" | "requestAt" | "planAt">,
): number[] {
  const { messages, requestAt, planAt } = state;
  const request = messages[requestAt];
  if (!request || !HumanMessage.isInstance(request) || request.content !== state.request)
    return pinnedOf(messages, requestIndex(state));
  const plan = messages[planAt];
  return planAt > requestAt && plan && isPlanNote(plan) ? [requestAt, planAt] : [requestAt];
}

const isPlanNote = (m: BaseMessage) =>
  HumanMessage.isInstance(m) &&
  typeof m.content === "string" &&
  m.content.startsWith(PLAN_NOTE_HEADER);

/** The messages a fold keeps, by scanning: the request and the newest plan note after it. */
export function pinnedOf(messages: readonly BaseMessage[], request: number): number[] {
  for (let i = messages.length - 1; i > request; i--)
    if (isPlanNote(messages[i]!)) return [request, i];
  return [request];
}

/**
 * A tool's definition with its learned line (learning/lessons.ts) after the description. The lines
 * are chosen once per request, so the tool block, part of the prompt's prefix, stays the same all run.
 */
export function withLesson(def: ReturnType<typeof toolDefinition>, line: string | undefined) {
  return line
    ? {
        ...def,
        function: {
          ...def.function,
          description: `${def.function.description}\nLearned from earlier runs: ${line}`,
        },
      }
    : def;
}

/** The shared part of a turn's request, and the toolset and channel it uses. */
export async function turnSetup(
  state: CoderStateValue,
  env: NodeEnv,
  config: LangGraphRunnableConfig,
) {
  const run = await env.fit();
  const { window, fit, name: model } = run;
  const { channel, format, reuse } = run.drive;
  const mode = state.toolChannel?.pinned ? "prompt" : channel;
  const intent = state.intent?.intent ?? "build";
  const plan = env.settings.approval === "plan";
  const toolset = toolsForIntent(intent, await env.mcpTools(), plan);
  const tools = toolset.map((t) => withLesson(toolDefinition(t), state.lessons[t.name]?.line));
  // The store's calibration matters only to a thread without its own for this model.
  const learned = state.fit?.model === model ? undefined : await learnedScales(config.store, model);
  const base: Omit<TurnRequest, "history" | "tools" | "mode" | "kind"> = {
    env,
    model: run.chat,
    modelName: model,
    ...(learned ? { learned } : {}),
    remember: (scales) => rememberScales(config.store, model, scales),
    system: ACT_SYSTEM(intent, state.workspaceAtStart, state.instructions, plan),
    format,
    window,
    fit: state.fit,
    ...(reuse ? { cacheReuse: reuse } : {}),
    ...(env.settings.thinkCut && fit.think ? { thinkCut: env.settings.thinkCut } : {}),
    pinned: () => pinsOf(state),
    ...(state.carried ? { carried: state.carried } : {}),
    ...(config.signal ? { signal: config.signal } : {}),
  };
  return { intent, tools, toolset, mode, format, base };
}

/** What `turnSetup` gives a turn. */
export type TurnSetup = Awaited<ReturnType<typeof turnSetup>>;
