/**
 * The run's tool calls counted, pure: what a run needs to know about all of its calls (how many,
 * whether it changed a file or ran a command, each tool's outcomes for `keel stats`) kept as counts
 * per kind of call, so it stays the same size however long the run. The calls themselves are in
 * `trail`, the newest `TRAIL_WINDOW` of them (what the loop guard looks at).
 */
import type { TrailEntry } from "../guard/loop.js";
import type { ToolClass, ToolFailureKind } from "../tools/types.js";

/** A kind of repair keel made to a call, from its note (tools/repair.ts). */
export const REPAIR_KINDS = ["tool name", "field alias", "JSON string", "type", "other"] as const;
export type RepairKind = (typeof REPAIR_KINDS)[number];

export function repairKind(note: string): RepairKind {
  if (/^called \S+ for /.test(note)) return "tool name";
  if (/^used \S+ as /.test(note)) return "field alias";
  if (note.startsWith("parsed the arguments from a JSON string")) return "JSON string";
  if (/^\S+: .* → /.test(note)) return "type";
  return "other";
}

/** One call as a run record lists it. */
export interface CallRecord {
  tool: string;
  ok: boolean;
  /** Failure kind when not ok. */
  kind?: ToolFailureKind;
  repairs: RepairKind[];
}

/** Calls `trail` keeps: more than any loop detector looks back (settings `loopWindowSize` and kin). */
export const TRAIL_WINDOW = 64;

/** One call as the tally counts it. */
export interface CallNote {
  tool: string;
  toolClass: ToolClass | "unknown";
  ok: boolean;
  kind?: ToolFailureKind;
  /** The kinds of repair keel made to it (`repairKind`). */
  repairs?: CallRecord["repairs"];
}

/** Calls per kind of call: a `CallNote` as JSON → how many. */
export type CallTally = Record<string, number>;

/** The note a trail entry is counted by. */
export function noteOf(e: TrailEntry): CallNote {
  return {
    tool: e.name,
    toolClass: e.toolClass,
    ok: e.ok,
    ...(e.kind ? { kind: e.kind } : {}),
    ...(e.repaired ? { repairs: e.repaired.split("; ").map(repairKind) } : {}),
  };
}

/** The tally with `notes` added (a new object: a kept value is never changed). */
export function addCalls(tally: CallTally, notes: readonly CallNote[]): CallTally {
  const next = { ...tally };
  for (const n of notes) {
    const key = JSON.stringify(n);
    next[key] = (next[key] ?? 0) + 1;
  }
  return next;
}

/** The counted kinds of call with their counts. */
export function notesOf(tally: CallTally): Array<[CallNote, number]> {
  return Object.entries(tally).map(([key, n]) => [JSON.parse(key) as CallNote, n]);
}

const count = (tally: CallTally, test: (n: CallNote) => boolean) =>
  notesOf(tally).reduce((sum, [note, n]) => sum + (test(note) ? n : 0), 0);

/** Calls this run, and those that succeeded. */
export const callCount = (tally: CallTally) => count(tally, () => true);
export const okCount = (tally: CallTally) => count(tally, (n) => n.ok);

/** A command ran: one that ran and failed still ran; a refused one did not. */
export const ranCommand = (tally: CallTally) =>
  count(
    tally,
    (n) =>
      n.toolClass === "command" &&
      (n.ok || n.kind === "failed" || n.kind === "timeout" || n.kind === "interrupted"),
  ) > 0;

/** Calls of run_command's class, and whether one waited for an approval no one gave. */
export const commandCalls = (tally: CallTally) => count(tally, (n) => n.toolClass === "command");
export const commandOk = (tally: CallTally) =>
  count(tally, (n) => n.toolClass === "command" && n.ok) > 0;
export const unapproved = (tally: CallTally) =>
  count(tally, (n) => n.toolClass === "command" && n.kind === "needs_approval") > 0;

/** A file-changing call succeeded. */
export const mutated = (tally: CallTally) =>
  count(tally, (n) => n.toolClass === "mutate" && n.ok) > 0;

/** Calls the loop guard cut. */
export const loopsCut = (tally: CallTally) => count(tally, (n) => n.kind === "loop");

/** The run's calls as `keel stats` and the lessons count them (in no particular order). */
export function callRecords(tally: CallTally): CallRecord[] {
  return notesOf(tally).flatMap(([n, times]) =>
    Array.from({ length: times }, () => ({
      tool: n.tool,
      ok: n.ok,
      ...(n.kind ? { kind: n.kind } : {}),
      repairs: n.repairs ?? [],
    })),
  );
}

/** The tally of a trail: a thread from before the tally kept its run's whole trail in state. */
export const tallyOfTrail = (trail: readonly TrailEntry[]) => addCalls({}, trail.map(noteOf));
