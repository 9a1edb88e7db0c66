import { callCount, okCount } from "../call-tally.js";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { decideRecovery, hintFor, RUNGS } from "../../guard/ladder.js";
import { settingsFrom } from "../context.js";
import type { CoderStateUpdate, CoderStateValue, Failure } from "../state.js";
import { unansweredCalls } from "../conversation.js";
import { requestedEffect, unwritten } from "../requested-effect.js";
import { unrunCommand } from "./act/effect.js";

/** The message keel puts into the model's context; marked so a person reading the thread sees who spoke. */
export const keelNote = (text: string) =>
  new HumanMessage({ content: `[keel] ${text}`, name: "keel" });

/** An honest account of the run: what was done, what failed, why it stopped, and the model's own summary. */
export function buildReport(
  state: CoderStateValue,
  reason: string,
  modelSummary: string | undefined,
  interactive: boolean,
): string {
  const calls = callCount(state.callTally);
  const ok = okCount(state.callTally);
  // The newest failures (`trail` keeps the run's newest calls)
  const failed = state.trail.filter((t) => !t.ok);
  const lines = [
    `Stopped: ${reason}.`,
    `Turns: ${state.turns}; tool calls: ${calls} (${ok} ok, ${calls - ok} failed).`,
    state.filesWritten.length
      ? `Files written: ${state.filesWritten.join(", ")}.`
      : "No file was written.",
  ];
  const missing = unwritten(requestedEffect(state.request).paths, state.filesWritten);
  if (missing.length)
    lines.push(`Not done: the request asks for ${missing.join(", ")} to be written.`);
  const unrun = unrunCommand(state, interactive)?.detail;
  if (unrun && !reason.includes(unrun)) lines.push(`Not done: ${unrun}.`);
  if (failed.length)
    lines.push(
      `Failures: ${failed
        .slice(-5)
        .map((t) => `${t.name} (${t.kind})`)
        .join(", ")}.`,
    );
  if (modelSummary) lines.push(`The model's summary: ${modelSummary}`);
  return lines.join("\n");
}

/**
 * The recovery ladder (docs/DESIGN.md): strike counters per failure kind, kept in state so a resumed
 * thread keeps counting. Hint → re-plan → a forced tool-less summary turn → ask a human
 * (interactive runs) → end with a report.
 */
export function createRecoverNode() {
  return (state: CoderStateValue, config: LangGraphRunnableConfig): CoderStateUpdate => {
    const failure = state.failure;
    if (!failure) return {};
    const settings = settingsFrom(config);
    const kind = failure.kind;
    const strike = (state.strikes[kind] ?? 0) + (failure.summarized ? 0 : 1);
    const strikes = { ...state.strikes, [kind]: strike };
    const ladder = {
      hints: settings.recoveryHints,
      replans: settings.recoveryReplans,
      interactive: settings.interactive,
    };
    const action = decideRecovery(kind, strike, ladder, failure.summarized);
    const base: CoderStateUpdate = {
      strikes,
      failure: null,
      errorStreak: 0,
      ...(RUNGS.indexOf(action) > RUNGS.indexOf(state.rung) ? { rung: action } : {}),
    };

    if (action === "hint")
      return {
        ...base,
        messages: [keelNote(hintFor(kind, strike, failure.detail))],
      };
    if (action === "replan") {
      return {
        ...base,
        replanReason: failure.detail,
        messages: [
          keelNote(
            `${hintFor(kind, strike, failure.detail)} The plan has been revised; follow the new plan.`,
          ),
        ],
      };
    }
    // Calls left unanswered when the run winds down get an answer, so the thread stays well-formed.
    const skipped = skippedCalls(state);
    if (action === "summarize") return { ...base, messages: skipped, summaryFor: failure };
    const modelSummary = failure.summarized ? state.summary : undefined;
    if (action === "ask")
      return askHuman(
        state,
        failure,
        { base, strikes, skipped, modelSummary },
        settings.interactive,
      );
    return {
      ...base,
      messages: skipped,
      status: "gave_up",
      summary: buildReport(state, failure.detail, modelSummary, settings.interactive),
    };
  };
}

/** An answer to each call left unanswered when the run winds down: the thread stays well-formed. */
function skippedCalls(state: CoderStateValue): ToolMessage[] {
  return unansweredCalls(state.messages).map(
    (c) =>
      new ToolMessage({
        content: "Error [refused]: not run: the run is stopping.",
        tool_call_id: c.id ?? "",
        name: c.name,
        status: "error",
      }),
  );
}

/**
 * The ladder's "ask" rung: a person is asked what to do; an answer resets the strikes of its kind
 * and goes to the model, none stops the run with a report.
 */
function askHuman(
  state: CoderStateValue,
  failure: Failure,
  sofar: {
    base: CoderStateUpdate;
    strikes: Record<string, number>;
    skipped: ToolMessage[];
    modelSummary: string | undefined;
  },
  interactive: boolean,
): CoderStateUpdate {
  const { base, strikes, skipped, modelSummary } = sofar;
  const kind = failure.kind;
  const answer: unknown = interrupt({
    type: "ask_human",
    kind,
    detail: failure.detail,
    summary: modelSummary,
    question: `keel is stuck: ${failure.detail}. What should it do? (an empty answer stops the run)`,
  });
  if (typeof answer === "string" && answer.trim()) {
    return {
      ...base,
      strikes: { ...strikes, [kind]: 0 },
      messages: [...skipped, new HumanMessage(answer.trim())],
      summary: "",
    };
  }
  return {
    ...base,
    messages: skipped,
    status: "needs_human",
    summary: buildReport(
      state,
      `${failure.detail}; no human guidance was given`,
      modelSummary,
      interactive,
    ),
  };
}
