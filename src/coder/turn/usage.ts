/**
 * A turn's token figures: what the server counted (prompt, generated, cached), and the reused
 * tokens — the server's own cache count where it reports one, else keel's estimate; and what they
 * mean for the thread's fit state across requests (coder/state.ts `FitState`): when it is worth a
 * write, and whether a server asked to shift its cache did.
 */
import type { TurnUsage } from "../turn-sums.js";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { scalesOf } from "../history/calibrate.js";
import { estimatePrompt, promptProfile, type fitToWindow } from "../history/fit.js";
import { recordIndex } from "../history/record.js";
import { weighProfile } from "../../guard/token-estimate.js";
import type { ServerCounts } from "../../models/reply-facts.js";
import type { WireFacts } from "../../models/wire.js";
import type { FitState } from "../state.js";

/**
 * keel's estimate of the prompt tokens the server could take from its cache: everything up to the
 * previous turn's reply when nothing before the tail changed; after a fold, the prompt before the
 * record; nothing when the system prompt, the tools or the model changed.
 */
export function reusedEstimate(
  before: FitState | undefined,
  key: string,
  fixed: string,
  fitted: ReturnType<typeof fitToWindow>,
): number {
  if (!before || before.prefix !== key) return 0;
  const ms = fitted.messages;
  if (fitted.compacted) {
    const record = recordIndex(ms);
    return estimatePrompt(fixed, ms.slice(0, Math.max(0, record)));
  }
  let last = ms.length - 1;
  while (last >= 0 && !AIMessage.isInstance(ms[last])) last--;
  return last < 0 ? estimatePrompt(fixed, []) : estimatePrompt(fixed, ms.slice(0, last + 1));
}

/**
 * The counts of a reply: the server's, or for one keel stopped mid-stream, of which the server
 * counted nothing, keel's estimate of the prompt (`estimate`) and the pieces it streamed.
 */
export function countsOf(
  counts: ServerCounts,
  facts: WireFacts,
  estimate: number,
): ServerCounts & { byKeel?: true } {
  if (facts.streamedPieces === undefined || counts.prompt !== undefined) return counts;
  return { prompt: estimate, generated: facts.streamedPieces, byKeel: true };
}

/**
 * Per-turn figures from the server's counts (or keel's, `countsOf`); the reused tokens as the server reports them (its
 * cache counters), else keel's estimate of the share it could reuse (Ollama reports none).
 */
export function usageOf(
  counts: ServerCounts & { byKeel?: true },
  reusedShare: number,
): { usage?: TurnUsage } {
  const { prompt, generated, evalNs, cached, byKeel } = counts;
  if (!prompt && !generated) return {};
  const promptTokens = prompt ?? 0;
  const reusedTokens =
    cached !== undefined
      ? Math.min(cached, promptTokens)
      : Math.round(promptTokens * Math.min(1, reusedShare));
  return {
    usage: {
      promptTokens,
      reusedTokens,
      reusedFrom: cached !== undefined ? "server" : "estimate",
      newTokens: promptTokens - reusedTokens,
      generatedTokens: generated ?? 0,
      ...(generated && evalNs
        ? { tokensPerSecond: Math.round((generated / (evalNs / 1e9)) * 10) / 10 }
        : {}),
      ...(byKeel ? { countedBy: "keel" as const } : {}),
    },
  };
}

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
