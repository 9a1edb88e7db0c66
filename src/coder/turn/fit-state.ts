/**
 * The thread's fit state across requests (coder/state.ts `FitState`): when it is worth a write, and
 * whether a server asked to shift its cache did.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { scalesOf } from "../history/calibrate.js";
import { promptProfile } from "../history/fit.js";
import { recordIndex } from "../history/record.js";
import { weighProfile } from "../../guard/token-estimate.js";
import type { FitState } from "../state.js";

/**
 * A fold laid out for a server that shifts its cache, answered without a shift: the server served
 * under half of what sat before the record (`kept`: the kept turns, still in its cache further on).
 * llama-server ignores `n_cache_reuse` for a model it cannot shift (sliding-window attention without
 * `--swa-full`, recurrent models) and says so only in its log; the thread then folds plainly.
 */
export function shiftRefused(
  fixed: string,
  messages: BaseMessage[],
  cached: number,
  scales: readonly number[],
): { kept: number } | undefined {
  const at = recordIndex(messages);
  if (at < 0) return undefined;
  const kept = Math.round(weighProfile(promptProfile(fixed, messages.slice(0, at)), scales));
  return cached < kept / 2 ? { kept } : undefined;
}

/** The fit state to write after a request: only when it changed (every write is a row in the checkpointer). */
export function fitUpdate(
  before: FitState | undefined,
  after: FitState | undefined,
): { fit?: FitState } {
  if (!after) return {};
  const same =
    before &&
    before.foldedUpTo === after.foldedUpTo &&
    before.recordAt === after.recordAt &&
    before.unshifted === after.unshifted &&
    before.model === after.model &&
    before.prefix === after.prefix &&
    before.window === after.window &&
    !moved(scalesOf(before.scales), scalesOf(after.scales));
  return same ? {} : { fit: after };
}

/** Whether a calibration changed enough to be worth a write (3% in any class). */
export function moved(before: readonly number[], after: readonly number[]): boolean {
  return after.some((x, k) => Math.abs(x - before[k]!) > 0.03 * before[k]!);
}
