/**
 * Folded messages leave the conversation, pure: once a fold has put enough messages behind the
 * record's lines, act's update moves them out of `messages` (a write naming them: channels.ts) and
 * the record keeps their tally (`carried`), so the prompt reads exactly as before. Graph state then
 * holds the pinned messages, the record's lines and the tail — bounded by the window, not by the
 * thread's age — and a delta channel's snapshot of it is as small (channels.ts), so a resume reads
 * what was written since, not the whole thread.
 *
 * Nothing is lost: every message stays in the checkpointer as the write that added it, and the
 * thread's history (`graph.getStateHistory`) shows it; `archived` keeps positions absolute
 * (undo's step records).
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { MovedOut } from "../channels.js";
import { carryUpTo, type Carried } from "./record.js";
import { addSums, NO_TURNS, sumTurns, type TurnSums } from "../turn-sums.js";

/** Messages a move takes at least: each move rewrites what stays once, so moves are batched. */
export const ARCHIVE_BATCH = 64;

/** The fields a move changes, as act's update writes them. */
export interface ArchiveUpdate {
  /** The move (the ids of the messages that leave), then what the turn appends. */
  messages: Array<MovedOut | BaseMessage>;
  carried: Carried;
  archived: number;
  /** The run's turns among all it has moved, summed. */
  movedTurns: TurnSums;
  requestAt: number;
  planAt: number;
  foldedUpTo: number;
  recordAt?: number;
}

export interface ArchiveInput {
  /** The conversation as stored. */
  messages: readonly BaseMessage[];
  /** What this turn appends. */
  added: readonly BaseMessage[];
  /** The fold after this turn, in positions of `messages`. */
  foldedUpTo: number;
  recordAt?: number;
  /** The messages a fold keeps (the request, the plan note), ascending. */
  pinned: readonly number[];
  requestAt: number;
  planAt: number;
  /** The prompt budget the record is shaped for (fit.ts `promptBudget` of the window). */
  budget: number;
  carried?: Carried;
  archived: number;
  /** The run's moved turns so far. */
  movedTurns?: TurnSums;
}

/** The move after a turn, or undefined while fewer than `ARCHIVE_BATCH` messages can go. */
export function archiveFolded(a: ArchiveInput): ArchiveUpdate | undefined {
  if (a.foldedUpTo <= 0) return undefined;
  const carry = carryUpTo(a.messages, a.foldedUpTo, a.pinned, a.budget, a.carried, ARCHIVE_BATCH);
  if (!carry) return undefined;
  const moving = carry.carried.messages - (a.carried?.messages ?? 0);
  const pins = new Set(a.pinned);
  const leaving = a.messages.slice(0, carry.cut).filter((_, i) => !pins.has(i));
  // A message without an id cannot be named: it stays, and so does everything (a thread from
  // before LangGraph gave messages ids).
  if (leaving.some((m) => m.id == null)) return undefined;
  /** Where a kept message at `i` ends up: every moved message before it is gone. */
  const at = (i: number) => (i < 0 ? i : i - movedBefore(a.pinned, carry.cut, i));
  return {
    messages: [{ keel_moved: leaving.map((m) => m.id!) }, ...a.added],
    carried: carry.carried,
    archived: a.archived + moving,
    // The run's own turns: those after its request (which stays, pinned).
    movedTurns: addSums(
      a.movedTurns ?? NO_TURNS,
      sumTurns(a.messages.slice(Math.max(0, a.requestAt + 1), carry.cut)),
    ),
    requestAt: at(a.requestAt),
    planAt: at(a.planAt),
    foldedUpTo: a.foldedUpTo - moving,
    ...(a.recordAt !== undefined ? { recordAt: a.recordAt - moving } : {}),
  };
}

/** Messages moved out before position `i`: those before `cut`, but the pinned ones. */
function movedBefore(pinned: readonly number[], cut: number, i: number): number {
  const end = Math.min(i, cut);
  return end - pinned.filter((p) => p < end).length;
}
