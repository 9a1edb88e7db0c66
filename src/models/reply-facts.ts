/**
 * What the server sent with a reply that the client library loses or hides, read back. Pure.
 *
 * - Arguments that arrived as text: an OpenAI-compatible server's `function.arguments` the client
 *   could not parse (`invalid_tool_calls`), or Ollama's `arguments` string, which ChatOllama would
 *   drop with its call — the Ollama wire keeps it as a one-key object (`RAW_ARGUMENTS`) instead.
 *   Read, with every other repair, by the one repair pass (tools/call-repair.ts).
 * - Call ids: ChatOllama gives every call a random UUID of its own; the wire notes Ollama's
 *   (`WireFacts.callIds`) and `withServerCallIds` gives them back.
 * - Counts: what the server counted for the answer, from whichever API it speaks (`serverCounts`).
 */
import type { AIMessage } from "@langchain/core/messages";
import type { WireFacts } from "./wire.js";

/** The key under which the Ollama wire keeps arguments that arrived as a string. */
export const RAW_ARGUMENTS = "keel_raw_arguments";

/** Arguments the wire kept as text, as the client library passes them on. */
export const keptRaw = (text: string) => ({ [RAW_ARGUMENTS]: text });

/**
 * The text of a call's arguments when they arrived as text (a string, or what the wire kept);
 * undefined for arguments that are an object already.
 */
export function rawArguments(args: unknown): string | undefined {
  if (typeof args === "string") return args;
  if (!args || typeof args !== "object" || Array.isArray(args)) return undefined;
  const keys = Object.keys(args);
  const raw = (args as Record<string, unknown>)[RAW_ARGUMENTS];
  return keys.length === 1 && typeof raw === "string" ? raw : undefined;
}

/**
 * The reply with its calls' ids as the server gave them (`facts.callIds`), where the client
 * library replaced them and every call of the reply is accounted for; otherwise as it is. Mutates
 * and returns `reply`.
 */
export function withServerCallIds<R extends { tool_calls?: Array<{ id?: string }> }>(
  reply: R,
  facts: WireFacts,
): R {
  const ids = facts.callIds;
  const calls = reply.tool_calls;
  if (!ids || !calls || ids.length !== calls.length) return reply;
  reply.tool_calls = calls.map((c, i) => (ids[i] ? { ...c, id: ids[i] } : c));
  return reply;
}

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
