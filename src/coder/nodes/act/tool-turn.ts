/**
 * One model turn through exactly one tool channel: native (tools bound, none described in the
 * prompt) or prompt mode (tools described once, calls parsed from text). Classifies the reply and
 * records a failure (empty, prose, unparseable, repetition, unmet, cut) for `recover`.
 */
import { AIMessage, type ToolCall } from "@langchain/core/messages";
import { findRepetition, loopingTail } from "../../../guard/repetition.js";
import { schemasOf } from "../../../tools/call-repair.js";
import { withCallIds } from "../../conversation.js";
import type { NodeEnv } from "../../runtime.js";
import type { CoderStateUpdate, CoderStateValue, ReplyNotes } from "../../state.js";
import { askTurn, type TurnAnswer } from "../../turn/ask.js";
import { fitUpdate } from "../../turn/usage.js";
import type { TurnSetup } from "../../turn/setup.js";
import { readReply, rejectedNote, type ReadReply } from "./channel.js";
import { classifyReply, turnMetadata, visibleText } from "./reply.js";
import { unmetEffect } from "./effect.js";
import { mutated, ranCommand } from "../../call-tally.js";

/** Failures of the server's own tool-call parser after which the run stays in prompt mode. */
const PARSE_FAILURES_TO_PIN = 2;

export async function toolTurn(
  state: CoderStateValue,
  env: NodeEnv,
  { intent, tools, toolset, mode, format, base: turn }: TurnSetup,
): Promise<CoderStateUpdate> {
  const channel = state.toolChannel;
  if (mode === "native" && !turn.model.bindTools)
    throw new Error('the configured model cannot bind tools; use toolMode "prompt"');
  const answer = await askTurn({ ...turn, kind: "act", tools, mode, history: state.messages });
  const reply = answer.reply;
  if (answer.cut !== undefined) return cutTurn(state, answer, turn.modelName);

  const read = readReply(reply, {
    mode: answer.mode,
    format,
    tools: toolset,
    schemas: schemasOf(toolset),
  });
  const raw = typeof reply.content === "string" ? reply.content : reply.text;
  const calls = withCallIds(read.calls, state.turns);
  // No `id: reply.id`: servers repeat completion ids (a constant one made the messages reducer
  // replace earlier turns); the node's message gets keel's own (conversation.ts).
  const ai = new AIMessage({
    content: read.fromText ? read.content : raw,
    tool_calls: calls,
    ...turnMetadata(
      answer,
      turn.modelName,
      read.fromText && !overCap(read) ? { keel_raw_text: raw } : {},
      read.fromText && answer.mode === "native",
    ),
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
          // In plan mode a plan in prose is the answer: nothing may be changed.
          acted: !ai.tool_calls?.length && (env.settings.approval === "plan" || hasActed(state)),
        });
  // Only changed fields are written: every write is a row in the checkpointer.
  const next = channelAfter(channel, answer, format, read.fromText && answer.mode === "native");
  const update: CoderStateUpdate = {
    messages: [ai],
    turns: state.turns + 1,
    ...fitUpdate(state.fit, answer.fit),
  };
  if (state.failure) update.failure = null;
  const notes = replyNotesOf(calls, read);
  if (notes) update.replyNotes = notes;
  else if (state.replyNotes) update.replyNotes = null;
  if (JSON.stringify(channel) !== JSON.stringify(next)) update.toolChannel = next;
  if (kind === "empty")
    update.failure = { kind: "empty", detail: "the model replied with nothing" };
  if (kind === "prose")
    update.failure = { kind: "prose", detail: "the model answered in prose without acting" };
  if (kind === "unparseable") update.failure = { kind: "unparseable", detail: read.problem! };
  if (kind === "repetition") update.failure = { kind: "repetition", detail: repeated! };
  // "done" means done: a final answer without the file the request asked for is a failure.
  const unmet =
    kind === "final" && env.settings.approval !== "plan"
      ? unmetEffect(state, { workspace: env.workspace, interactive: env.settings.interactive })
      : undefined;
  if (unmet) {
    update.failure = { kind: "unmet", detail: unmet.detail };
    // no rung can help: the answer stands as the model's summary, and the run ends with a report
    if (unmet.final) {
      update.failure.summarized = true;
      update.summary = visibleText(read.content);
    }
  } else if (kind === "final") {
    update.status = "done";
    update.summary = visibleText(read.content);
  }
  return update;
}

/**
 * What tool-execute adds to the results of this reply's calls (state `replyNotes`), by call id:
 * the one pass's repairs of each call, and with the first call's result, the entries of the call
 * list keel could not read. Undefined when there is none.
 */
function replyNotesOf(
  calls: readonly ToolCall[],
  read: Pick<ReadReply, "repairs" | "rejected">,
): ReplyNotes | undefined {
  const notes: ReplyNotes = {};
  calls.forEach((c, i) => {
    const repaired = read.repairs[i]?.join("; ");
    if (repaired) notes[c.id!] = { repaired };
  });
  const first = calls[0]?.id;
  if (first && read.rejected?.length)
    notes[first] = { ...notes[first], unread: rejectedNote(read.rejected) };
  return Object.keys(notes).length ? notes : undefined;
}

/**
 * A reply with calls past the per-reply cap (cap.ts): the history keeps only the calls that ran
 * (prompt mode shows them in the tag form, history/prompt-form.ts), not the thousands it wrote,
 * which every later prompt would repeat.
 */
const overCap = (read: Pick<ReadReply, "rejected">) =>
  read.rejected?.some((r) => r.count !== undefined) ?? false;

/**
 * True once this run has done what a build/modify/run request needs: written a file, or run a
 * command (a command that ran and failed still ran; a refused one did not).
 */
export function hasActed(state: Pick<CoderStateValue, "callTally">): boolean {
  return mutated(state.callTally) || ranCommand(state.callTally);
}

/**
 * A turn the server stopped at the generation budget: no call of it runs (its arguments are cut:
 * `"{"`, or JSON that ends mid-string), the text it got to stays in the conversation without the
 * calls, and the failure tells the model to do it in smaller pieces (the ladder's `cut`).
 */
function cutTurn(state: CoderStateValue, answer: TurnAnswer, model: string): CoderStateUpdate {
  const reply = answer.reply;
  const { detail, looped, echoed } = answer.cut!;
  let text = typeof reply.content === "string" ? reply.content : reply.text;
  // A loop stays in the conversation once, not as the hundreds of repeats that streamed; a copy of
  // keel's instructions, as its first lines.
  const loop = looped === undefined || echoed ? undefined : loopingTail(text, text);
  if (loop) text = text.slice(0, loop.start + loop.unit.length);
  else if (echoed) text = `${text.slice(0, 200).trimEnd()} …`;
  return {
    messages: [new AIMessage({ content: text, ...turnMetadata(answer, model) })],
    turns: state.turns + 1,
    failure: { kind: looped === undefined ? "cut" : "repetition", detail },
    ...fitUpdate(state.fit, answer.fit),
  };
}

/** The tool channel after a turn: a tool-channel failure counts, and pins prompt mode when it must. */
function channelAfter(
  before: CoderStateValue["toolChannel"],
  answer: TurnAnswer,
  format: string,
  salvaged: boolean,
): NonNullable<CoderStateValue["toolChannel"]> {
  const failures = (before?.parseFailures ?? 0) + (answer.fallback ? 1 : 0);
  const pinned =
    before?.pinned ??
    ((answer.fallback && answer.fallback.kind !== "tool_parse") || failures >= PARSE_FAILURES_TO_PIN
      ? answer.fallback!.reason
      : undefined);
  return {
    mode: answer.mode,
    format,
    ...(salvaged ? { salvaged } : {}),
    ...(failures ? { parseFailures: failures } : {}),
    ...(pinned ? { pinned } : {}),
  };
}
