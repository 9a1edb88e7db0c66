/**
 * The loop guard (F5): pure detectors over the trail of calls, keyed on canonical signatures.
 * - repeat: the same call in a row (thresholds by tool class; a command whose result changes is a
 *   poll, not a loop);
 * - window: the same call many times among the last N with the same result (scattered repeats);
 * - cycle: A-B-A-B or A-B-C-A-B-C, three full cycles;
 * - no-progress: the same call returning the same result again and again;
 * - wobble: the same tool on the same target many times in a row, arguments changing only a little.
 * Different paths are never a loop. Each hit has a key, so "the same loop again" can be counted.
 */
import { distance } from "fastest-levenshtein";
import type { ToolClass, ToolFailureKind } from "../tools/types.js";

export interface TrailEntry {
  /** tool_call_id of the call. */
  id: string;
  name: string;
  signature: string;
  toolClass: ToolClass | "unknown";
  ok: boolean;
  /** Failure kind when not ok. */
  kind?: ToolFailureKind;
  /** Note of a repair keel applied before running the call. */
  repaired?: string;
  /** Hash of the result text (absent for calls that were not run). */
  result?: string;
  /** A change whose check (settings `checkCommand`) failed. */
  checkFailed?: true;
  /** The call's normalised path argument, if any. */
  target?: string;
  /** Signature of the non-path arguments. */
  rest?: string;
}

export interface LoopSettings {
  /** Identical calls in a row that make a loop, by tool class. */
  repeat: Record<ToolClass, number>;
  /** Same call this many times among the last `windowSize` calls. */
  windowCount: number;
  windowSize: number;
  /** Full cycles of a period-2 or period-3 pattern. */
  cycles: number;
  /** Same call with the same result this many times (anywhere in the window). */
  noProgress: number;
  /** Same tool on the same target, arguments wobbling, this many times in a row. */
  wobble: number;
}

export const DEFAULT_LOOP_SETTINGS: LoopSettings = {
  repeat: { explore: 3, mutate: 2, command: 3 },
  windowCount: 4,
  windowSize: 12,
  cycles: 3,
  noProgress: 3,
  wobble: 5,
};

export type LoopDetector = "repeat" | "window" | "cycle" | "no-progress" | "wobble";

export interface LoopHit {
  detector: LoopDetector;
  /** Identifies the loop: the same key again is the same loop. */
  key: string;
  /** How many times the pattern has now occurred (calls, or cycles). */
  count: number;
  /** The calls that make the loop, oldest first (signatures). */
  calls: string[];
}

/** The call about to run, as the detectors see it. */
export interface Candidate {
  name: string;
  signature: string;
  toolClass: ToolClass | "unknown";
  target?: string;
  rest?: string;
}

const classOf = (c: Candidate["toolClass"]): ToolClass => (c === "unknown" ? "explore" : c);

function repeat(trail: readonly TrailEntry[], c: Candidate, s: LoopSettings): LoopHit | undefined {
  const same: TrailEntry[] = [];
  for (let i = trail.length - 1; i >= 0 && trail[i]!.signature === c.signature; i--)
    same.push(trail[i]!);
  const count = same.length + 1;
  if (count < s.repeat[classOf(c.toolClass)]) return undefined;
  // A command polled for a changing result is progress.
  if (c.toolClass === "command" && new Set(same.map((t) => t.result)).size > 1) return undefined;
  return { detector: "repeat", key: `repeat:${c.signature}`, count, calls: [c.signature] };
}

function window(trail: readonly TrailEntry[], c: Candidate, s: LoopSettings): LoopHit | undefined {
  const recent = trail.slice(-(s.windowSize - 1)).filter((t) => t.signature === c.signature);
  const count = recent.length + 1;
  if (count < s.windowCount) return undefined;
  // Scattered repeats whose results keep changing (a log re-read as it grows) are progress.
  if (new Set(recent.map((t) => t.result)).size > 1) return undefined;
  return { detector: "window", key: `window:${c.signature}`, count, calls: [c.signature] };
}

function cycle(trail: readonly TrailEntry[], c: Candidate, s: LoopSettings): LoopHit | undefined {
  // Only the tail can hold the cycle: at most 3 periods of the longest pattern.
  const seq = [...trail.slice(-(3 * s.cycles)).map((t) => t.signature), c.signature];
  for (const period of [2, 3]) {
    const need = period * s.cycles;
    if (seq.length < need) continue;
    const tail = seq.slice(-need);
    const pattern = tail.slice(0, period);
    if (new Set(pattern).size < 2) continue; // one call repeated is `repeat`'s business
    if (tail.every((sig, i) => sig === pattern[i % period])) {
      return {
        detector: "cycle",
        key: `cycle:${[...pattern].sort().join("|")}`,
        count: s.cycles,
        calls: pattern,
      };
    }
  }
  return undefined;
}

function noProgress(
  trail: readonly TrailEntry[],
  c: Candidate,
  s: LoopSettings,
): LoopHit | undefined {
  const recent = trail
    .slice(-(s.windowSize - 1))
    .filter((t) => t.signature === c.signature && t.result);
  const last = recent[recent.length - 1];
  if (!last) return undefined;
  const sameResult = recent.filter((t) => t.result === last.result).length;
  if (sameResult + 1 < s.noProgress) return undefined;
  return {
    detector: "no-progress",
    key: `no-progress:${c.signature}`,
    count: sameResult + 1,
    calls: [c.signature],
  };
}

/** Strings that differ only in digits: paging through a file, not wobbling. */
const digitsOnly = (a: string, b: string) => a.replace(/\d+/g, "#") === b.replace(/\d+/g, "#");

function wobble(trail: readonly TrailEntry[], c: Candidate, s: LoopSettings): LoopHit | undefined {
  const run: Array<Pick<TrailEntry, "rest" | "signature">> = [c];
  for (let i = trail.length - 1; i >= 0; i--) {
    const t = trail[i]!;
    if (t.name !== c.name || t.target !== c.target || t.rest === undefined || c.rest === undefined)
      break;
    const prev = run[run.length - 1]!.rest!;
    const d = distance(prev, t.rest);
    const small = d > 0 && d <= Math.max(3, Math.floor(0.2 * Math.max(prev.length, t.rest.length)));
    if (!small || digitsOnly(prev, t.rest)) break;
    run.push(t);
  }
  if (run.length < s.wobble) return undefined;
  return {
    detector: "wobble",
    key: `wobble:${c.name}:${c.target ?? ""}`,
    count: run.length,
    calls: run.map((r) => r.signature).reverse(),
  };
}

/** Runs every detector; the first hit wins (most specific first). */
export function detectLoop(
  trail: readonly TrailEntry[],
  c: Candidate,
  s: LoopSettings = DEFAULT_LOOP_SETTINGS,
): LoopHit | undefined {
  return (
    repeat(trail, c, s) ??
    cycle(trail, c, s) ??
    noProgress(trail, c, s) ??
    window(trail, c, s) ??
    wobble(trail, c, s)
  );
}

/**
 * The hint the model gets instead of a result: what repeated, how often, what it already has, and
 * what to try instead.
 */
export function loopHint(hit: LoopHit, lastOutput?: string): string {
  const seen = lastOutput
    ? `\nWhat that call returned last time:\n${lastOutput.slice(0, 600)}\n`
    : " ";
  const next =
    "Use what you already have: take a different next step (another file, another command), or, if the task is complete, answer without calling tools.";
  const what: Record<LoopDetector, string> = {
    repeat: `you made the same call ${hit.count} times in a row: ${hit.calls[0]}`,
    window: `you made the same call ${hit.count} times among your last calls: ${hit.calls[0]}`,
    cycle: `you went round the same cycle ${hit.count} times (${hit.calls.join(" → ")})`,
    "no-progress": `${hit.calls[0]} returned the same result ${hit.count - 1} times; calling it again changes nothing`,
    wobble: `you called ${hit.calls[0]?.split("(")[0]} ${hit.count} times in a row on the same target with only small changes to the arguments`,
  };
  return `loop detected: ${what[hit.detector]}, so this call was not run.${seen}${next} Repeating the loop escalates: keel re-plans, then stops the run.`;
}
