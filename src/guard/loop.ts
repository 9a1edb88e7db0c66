/**
 * The loop guard's first detector: the same call (by canonical signature) made again and again in a
 * row. Thresholds differ by tool class: exploring twice is normal, writing the same file with the
 * same content twice is not. Pure: takes the trail, returns a verdict.
 */
import type { ToolClass } from "../tools/types.js";

export interface TrailEntry {
  /** tool_call_id of the call. */
  id: string;
  name: string;
  signature: string;
  toolClass: ToolClass | "unknown";
  ok: boolean;
  /** Failure kind when not ok. */
  kind?: string;
  /** Note of a repair keel applied before running the call. */
  repaired?: string;
}

export type LoopThresholds = Record<ToolClass, number>;

export const DEFAULT_LOOP_THRESHOLDS: LoopThresholds = { explore: 3, mutate: 2, command: 3 };

export interface LoopVerdict {
  /** How many times in a row this exact call has now been made (including this one). */
  repeats: number;
  threshold: number;
  hit: boolean;
}

/** Counts identical consecutive calls ending with the one about to run. */
export function checkRepeat(
  trail: readonly TrailEntry[],
  signature: string,
  toolClass: ToolClass | "unknown",
  thresholds: LoopThresholds = DEFAULT_LOOP_THRESHOLDS,
): LoopVerdict {
  let repeats = 1;
  for (let i = trail.length - 1; i >= 0 && trail[i]!.signature === signature; i--) repeats++;
  const threshold = toolClass === "unknown" ? thresholds.explore : thresholds[toolClass];
  return { repeats, threshold, hit: repeats >= threshold };
}

/** The hint the model gets instead of a result when it repeats itself. */
export function loopHint(
  name: string,
  signature: string,
  repeats: number,
  lastOutput?: string,
): string {
  const seen = lastOutput ? ` Its result was:\n${lastOutput.slice(0, 600)}\n` : " ";
  return `loop detected: you called ${signature} ${repeats} times in a row, so this call was not run.${seen}Calling it again gives the same answer. Use that result: take the next step (read or write a different file, run a different command), or, if the task is complete, answer without calling tools. Another repeat ends the run.`;
}
