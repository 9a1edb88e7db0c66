/** What a server counted for one answer, read from whichever API it speaks. */
import type { AIMessage } from "@langchain/core/messages";
import type { WireFacts } from "./wire.js";

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
 * (read on the wire: `facts`), where the server reports them.
 */
export function serverCounts(
  reply: Pick<AIMessage, "response_metadata" | "usage_metadata"> | undefined,
  facts?: WireFacts,
): ServerCounts {
  const meta = (reply?.response_metadata ?? {}) as Record<string, number | undefined>;
  const usage = reply?.usage_metadata;
  const cached = facts?.cachedTokens ?? usage?.input_token_details?.cache_read;
  // llama.cpp's timings without usage: the prompt is what it took from the cache and what it evaluated.
  const fromTimings =
    facts?.evaluatedTokens !== undefined ? facts.evaluatedTokens + (cached ?? 0) : undefined;
  const prompt = meta.prompt_eval_count ?? (usage?.input_tokens || fromTimings);
  const generated = meta.eval_count ?? (usage?.output_tokens || undefined);
  return {
    ...(prompt !== undefined ? { prompt } : {}),
    ...(generated !== undefined ? { generated } : {}),
    ...(cached !== undefined ? { cached } : {}),
    ...(meta.eval_duration !== undefined ? { evalNs: meta.eval_duration } : {}),
  };
}
