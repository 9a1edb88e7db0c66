import { activeLines } from "../../learning/lessons.js";
import { lessonsOf } from "../../learning/ledger.js";
import { HumanMessage } from "@langchain/core/messages";
import { readdir } from "node:fs/promises";
import { Overwrite, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { structuredCall } from "../../../models/structured.js";
import { nodeEnv, type NodeEnv } from "../../runtime.js";
import { readInstructions } from "../../instructions.js";
import type { GraphDeps } from "../../../run/model.js";
import type { CoderStateUpdate, CoderStateValue, IntentResult } from "../../state.js";
import { INTENT_SYSTEM } from "./prompt.js";
import { classifyByRules } from "./rules.js";
import { GO_ON } from "./words.js";
import { IntentAnswer } from "./schema.js";

const SURE = 0.7;

/** Plain-data equality for small state fields; null and undefined both mean "not set". */
const sameValue = (a: unknown, b: unknown) =>
  (a ?? null) === (b ?? null) || JSON.stringify(a) === JSON.stringify(b);

/** The text of the newest human message: the request of this run. */
export function latestRequest(state: Pick<CoderStateValue, "messages">): string {
  return newestHuman(state.messages).text;
}

/** The newest human message's text and position (-1 and "" when there is none). */
function newestHuman(messages: CoderStateValue["messages"]): { at: number; text: string } {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (HumanMessage.isInstance(m))
      return { at: i, text: typeof m.content === "string" ? m.content : m.text };
  }
  return { at: -1, text: "" };
}

/** The workspace's top level as the run finds it, for the act prompt (listed once per run, not per turn). */
export function describeWorkspace(entries: readonly string[]): string {
  const shown = entries.filter((e) => e !== ".keel" && e !== ".git").sort();
  return shown.length === 0
    ? "The workspace is empty."
    : `Top-level entries: ${shown.slice(0, 30).join(", ")}${shown.length > 30 ? ", …" : ""}.`;
}

/**
 * Decides build | modify | analyze | run | chat: the rules when they are sure, else the model's
 * structured answer (falling back to the rules' guess if the model's answer never validates).
 * Starts a fresh run: every per-run counter is reset here, so a thread can take follow-up requests.
 */
export function createIntentClassifyNode(deps: GraphDeps) {
  return async (
    state: CoderStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<CoderStateUpdate> => {
    const newest = newestHuman(state.messages);
    // "continue" on a thread takes its request up again: the same effect to produce, the same
    // intent (and toolset), the files it wrote still counted
    const goOn =
      state.intent && state.request && GO_ON.test(newest.text.trim()) ? state.intent : undefined;
    const { at: requestAt, text: request } = goOn
      ? { at: state.requestAt, text: state.request }
      : newest;
    const env = nodeEnv(config, deps);
    // One listing serves the prompt's description and the look for instruction files; it is read
    // while the request is classified.
    const listed = readdir(env.workspace).catch(() => [] as string[]);
    const intent = goOn ?? (await classify(request, env));
    const listing = await listed;
    const { window, name } = await env.fit();
    const fresh: CoderStateUpdate = {
      request,
      requestAt,
      planAt: -1,
      intent,
      workspaceAtStart: describeWorkspace(listing),
      instructions: await readInstructions(env.workspace, window, listing),
      planSteps: [],
      replanReason: undefined,
      toolChannel: undefined,
      turns: 0,
      loopHits: {},
      summaryFor: null,
      errorStreak: 0,
      strikes: {},
      rung: "none",
      lessons: await learnedLines(config, env.settings.learnDescriptions, name),
      failure: null,
      status: "running",
      summary: "",
    };
    // Only what differs from the thread's state is written: every write is a row in the checkpointer.
    const update = Object.fromEntries(
      Object.entries(fresh).filter(([k, v]) => !sameValue(state[k as keyof CoderStateValue], v)),
    ) as CoderStateUpdate;
    if (goOn) return update;
    if (state.trail.length > 0) update.trail = new Overwrite([]);
    if (Object.keys(state.callTally).length > 0) update.callTally = new Overwrite({});
    if (state.movedTurns) update.movedTurns = null;
    if (state.filesWritten.length > 0) update.filesWritten = new Overwrite([]);
    return update;
  };
}

/** The rules' intent when they are sure, else the model's structured answer (else the rules' guess). */
async function classify(request: string, env: NodeEnv): Promise<IntentResult> {
  const rules = classifyByRules(request);
  if (rules.confidence >= SURE || !request.trim()) return { ...rules, source: "rules" };
  const { chat, window } = await env.fit();
  const answer = await structuredCall(chat, IntentAnswer, INTENT_SYSTEM, request, env.policy, {
    maxTokens: env.settings.generationBudget.classify,
    window,
  });
  return answer
    ? { intent: answer.intent, confidence: 0.8, source: "model" }
    : { ...rules, source: "rules" };
}

/** The lines this request's tool descriptions get from the model's ledger (learning/lessons.ts). */
async function learnedLines(
  config: LangGraphRunnableConfig,
  learn: boolean,
  model: string,
): Promise<CoderStateValue["lessons"]> {
  if (!config.store || !learn) return {};
  try {
    return activeLines(await lessonsOf(config.store, model));
  } catch {
    return {}; // a store that cannot be read teaches nothing; the run goes on
  }
}
