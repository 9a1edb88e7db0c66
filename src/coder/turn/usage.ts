/**
 * A turn's token figures: what the server counted (prompt, generated, cached), and the reused
 * tokens — the server's own cache count where it reports one, else keel's estimate.
 */
import type { TurnUsage } from "../turn-sums.js";
import { AIMessage } from "@langchain/core/messages";
import { estimatePrompt, type fitToWindow } from "../history/fit.js";
import { recordIndex } from "../history/record.js";
import type { ServerCounts } from "../../models/server-counts.js";
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
