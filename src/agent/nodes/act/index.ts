import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { SUMMARY_REQUEST } from "../../../guard/ladder.js";
import { findRepetition } from "../../../guard/repetition.js";
import { chooseToolMode } from "../../../models/capabilities.js";
import { withModelRetry } from "../../../models/retry.js";
import type { ArgSchemas } from "../../../models/tool-calls/types.js";
import { toolDefinition, toolsForIntent } from "../../../tools/registry.js";
import { nodeEnv, type GraphDeps, type NodeEnv } from "../../runtime.js";
import type { CoderStateUpdate, CoderStateValue } from "../../state.js";
import { readReply, toPromptHistory } from "./channel.js";
import { classifyReply, visibleText } from "./classify.js";
import { fitToWindow } from "./fit.js";
import { ACT_SYSTEM } from "./prompt.js";
import { promptFormat, TOOLS_IN_PROMPT } from "./tool-prompt.js";

/**
 * True once this run has done what a build/modify/run request needs: written a file, or run a
 * command (a command that ran and failed still ran; a refused one did not).
 */
export function hasActed(state: Pick<CoderStateValue, "trail">): boolean {
  return state.trail.some(
    (t) =>
      (t.toolClass === "mutate" && t.ok) ||
      (t.toolClass === "command" &&
        (t.ok || t.kind === "failed" || t.kind === "timeout" || t.kind === "interrupted")),
  );
}

/** Index of the message holding this run's request (the newest human message with its text). */
function requestIndex(state: CoderStateValue): number {
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i]!;
    if (HumanMessage.isInstance(m) && m.content === state.request) return i;
  }
  return 0;
}

/** Invokes the model on a history fitted to the window; reports a compaction on the timeline. */
async function callModel(
  env: NodeEnv,
  runnable: { invoke: (m: BaseMessage[], o: object) => Promise<unknown> },
  system: string,
  history: BaseMessage[],
  fixed: string,
  window: number,
  state: CoderStateValue,
  signal?: AbortSignal,
) {
  const fitted = fitToWindow(history, `${system}\n${fixed}`, window, () => requestIndex(state));
  if (fitted.compacted) env.emit({ type: "compacted", ...fitted.compacted });
  return (await withModelRetry(
    () => runnable.invoke([new SystemMessage(system), ...fitted.messages], { signal }),
    env.policy,
  )) as AIMessage;
}

/**
 * One model turn through exactly one tool channel: native (tools bound, none described in the
 * prompt) or prompt mode (tools described once, calls parsed from text). Classifies the reply and
 * records a failure (empty, prose, unparseable, repetition) for `recover`. A spent turn budget is
 * a failure without a model call. When `recover` asks for it, this is the forced tool-less turn in
 * which the model summarises what it did.
 */
export function createActNode(deps: GraphDeps) {
  return async (
    state: CoderStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<CoderStateUpdate> => {
    const env = nodeEnv(config, deps);
    if (!state.summaryFor && state.turns >= env.settings.maxTurns) {
      return {
        failure: {
          kind: "budget",
          detail: `the turn budget (${env.settings.maxTurns} model turns) is spent`,
        },
      };
    }
    const profile = deps.probe
      ? await deps.probe(env.settings.ollamaUrl, env.settings.model, env.policy)
      : undefined;
    const mode = chooseToolMode(profile, env.settings.toolMode);
    const format = promptFormat(profile?.format ?? "hermes");
    const window = Math.min(env.settings.contextWindow, profile?.contextLength ?? Infinity);
    const intent = state.intent?.intent ?? "build";
    const tools = toolsForIntent(intent).map(toolDefinition);
    const model = env.model();
    const system = ACT_SYSTEM(
      intent,
      state.planSteps.map((s) => s.title),
      state.workspaceAtStart,
    );
    const toPrompt = (h: BaseMessage[]) => (mode === "prompt" ? toPromptHistory(h) : h);

    if (state.summaryFor) {
      const ask = new HumanMessage({
        content: SUMMARY_REQUEST(state.summaryFor.detail),
        name: "keel",
      });
      const reply = await callModel(
        env,
        model,
        system,
        toPrompt([...state.messages, ask]),
        "",
        window,
        state,
        config.signal,
      );
      const text = typeof reply.content === "string" ? reply.content : reply.text;
      return {
        messages: [ask, new AIMessage({ id: reply.id, content: text })],
        turns: state.turns + 1,
        summary: visibleText(
          readReply(reply, { mode: "prompt", format, toolNames: [], schemas: {}, idPrefix: "x" })
            .content,
        ),
        summaryFor: null,
        failure: { ...state.summaryFor, summarized: true },
      };
    }

    let runnable: { invoke: (m: BaseMessage[], o: object) => Promise<unknown> } = model;
    let fixed = JSON.stringify(tools);
    let fullSystem = system;
    if (mode === "native") {
      if (!model.bindTools)
        throw new Error('the configured model cannot bind tools; use toolMode "prompt"');
      runnable = model.bindTools(tools);
    } else {
      fullSystem += `\n${TOOLS_IN_PROMPT(tools, format)}`;
      fixed = "";
    }
    const reply = await callModel(
      env,
      runnable,
      fullSystem,
      toPrompt(state.messages),
      fixed,
      window,
      state,
      config.signal,
    );

    const schemas: ArgSchemas = Object.fromEntries(
      tools.map((t) => [t.function.name, t.function.parameters as ArgSchemas[string]]),
    );
    const read = readReply(reply, {
      mode,
      format,
      toolNames: tools.map((t) => t.function.name),
      schemas,
      idPrefix: `call_${state.turns}`,
    });
    const raw = typeof reply.content === "string" ? reply.content : reply.text;
    const ai = new AIMessage({
      id: reply.id,
      content: read.fromText ? read.content : raw,
      tool_calls: read.calls.map((c, i) => ({ ...c, id: c.id || `call_${state.turns}_${i}` })),
      additional_kwargs: read.fromText ? { keel_raw_text: raw } : {},
      response_metadata: reply.response_metadata,
      ...(reply.usage_metadata ? { usage_metadata: reply.usage_metadata } : {}),
    });
    // Only a reply without calls can be a repetition; only then are earlier replies looked at.
    const repeated = ai.tool_calls?.length
      ? undefined
      : findRepetition(
          visibleText(read.content),
          state.messages
            .filter((m) => AIMessage.isInstance(m) && !m.tool_calls?.length)
            .map((m) => visibleText(typeof m.content === "string" ? m.content : "")),
        );
    const kind = read.problem
      ? "unparseable"
      : repeated
        ? "repetition"
        : classifyReply({
            toolCallCount: ai.tool_calls?.length ?? 0,
            content: read.content,
            intent,
            acted: !ai.tool_calls?.length && hasActed(state),
          });
    // Only changed fields are written: every write is a row in the checkpointer.
    const channel = { mode, format, ...(read.fromText ? { salvaged: mode === "native" } : {}) };
    const update: CoderStateUpdate = { messages: [ai], turns: state.turns + 1 };
    if (state.failure) update.failure = null;
    if (JSON.stringify(state.toolChannel) !== JSON.stringify(channel)) update.toolChannel = channel;
    if (kind === "empty")
      update.failure = { kind: "empty", detail: "the model replied with nothing" };
    if (kind === "prose")
      update.failure = { kind: "prose", detail: "the model answered in prose without acting" };
    if (kind === "unparseable") update.failure = { kind: "unparseable", detail: read.problem! };
    if (kind === "repetition") update.failure = { kind: "repetition", detail: repeated! };
    if (kind === "final") {
      update.status = "done";
      update.summary = visibleText(read.content);
    }
    return update;
  };
}
