/**
 * A turn's token figures: what the server counted (prompt, generated, cached), and the reused
 * tokens — the server's own cache count where it reports one, else keel's estimate.
 */
import { AIMessage } from "@langchain/core/messages";
import { estimatePrompt, type fitToWindow } from "../history/fit.js";
import { recordIndex } from "../history/record.js";
import type { WireSeen } from "../../models/wire.js";
import type { FitState, TurnUsage } from "../state.js";

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

/** What the server counted for one answer, whichever API it speaks. */
export interface ServerCounts {
  prompt?: number;
  generated?: number;
  /** Prompt tokens served from the server's cache, where the server reports it. */
  cached?: number;
  /** Nanoseconds of generation (Ollama only). */
  evalNs?: number;
}

/**
 * The server's counts: Ollama's `prompt_eval_count`/`eval_count`/`eval_duration`, or the standard
 * usage (an OpenAI-compatible server's `usage.prompt_tokens`, when it sent usage); the cached
 * prompt tokens from `usage.prompt_tokens_details.cached_tokens` or llama.cpp's `timings.cache_n`
 * (read on the wire: `seen`), where the server reports them.
 */
export function serverCounts(reply: AIMessage, seen?: WireSeen): ServerCounts {
  const meta = reply.response_metadata as Record<string, number | undefined>;
  const usage = reply.usage_metadata;
  const cached = seen?.cachedTokens ?? usage?.input_token_details?.cache_read;
  // llama.cpp's timings without usage: the prompt is what it took from the cache and what it evaluated.
  const fromTimings =
    seen?.evaluatedTokens !== undefined ? seen.evaluatedTokens + (cached ?? 0) : undefined;
  const prompt = meta.prompt_eval_count ?? (usage?.input_tokens || fromTimings);
  const generated = meta.eval_count ?? (usage?.output_tokens || undefined);
  return {
    ...(prompt !== undefined ? { prompt } : {}),
    ...(generated !== undefined ? { generated } : {}),
    ...(cached !== undefined ? { cached } : {}),
    ...(meta.eval_duration !== undefined ? { evalNs: meta.eval_duration } : {}),
  };
}

/**
 * Per-turn figures from the server's counts; the reused tokens as the server reports them (its
 * cache counters), else keel's estimate of the share it could reuse (Ollama reports none).
 */
export function usageOf(counts: ServerCounts, reusedShare: number): { usage?: TurnUsage } {
  const { prompt, generated, evalNs, cached } = counts;
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
    },
  };
}
