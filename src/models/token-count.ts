/**
 * The model server's own tokenizer, where it offers one over HTTP. llama.cpp's server:
 * `POST /tokenize {"content"}` → `{"tokens": [...]}`; vLLM: `POST /tokenize {"model", "prompt"}` →
 * `{"count", "tokens", "max_model_len"}` (both at the server's root, beside `/v1`). Ollama has no
 * such endpoint (ollama issues 3582, 12031; PRs 7412 closed, 12030 and 16820 open), nor has LM
 * Studio's REST API (its SDK counts tokens over its own socket protocol): for those keel keeps its
 * calibrated estimate (guard/token-estimate.ts, coder/history/calibrate.ts).
 *
 * Used for the big items only (a file read's tool result), never per small message.
 */
import type { ServerKind } from "./openai/quirks.js";
import type { Provider } from "./provider.js";
import { serverRoot } from "./openai/probe.js";
import { resendingDropped } from "./retry.js";

/** Counts `text`'s tokens on the server; undefined when the server could not say. */
export type TokenCounter = (text: string, signal?: AbortSignal) => Promise<number | undefined>;

/** Characters from which a text is worth the server's exact count (a request's round trip). */
export const EXACT_COUNT_FROM = 4000;

export interface TokenCounterOptions {
  provider?: Provider;
  /** Which OpenAI-compatible server it is, from the capability probe. */
  server?: ServerKind;
  /** The OpenAI-compatible base URL (`…/v1`). */
  baseUrl?: string;
  apiKey?: string;
  model: string;
  fetchImpl?: typeof fetch;
  /** Milliseconds before a count is given up (default 5,000). */
  timeoutMs?: number;
}

/**
 * The server's token counter, or undefined when the server offers none (Ollama, LM Studio, MLX,
 * an unknown server). A counter never throws: a failed or malformed answer is `undefined`.
 */
export function serverTokenCounter(o: TokenCounterOptions): TokenCounter | undefined {
  if (o.provider !== "openai" || !o.baseUrl) return undefined;
  if (o.server !== "llama.cpp" && o.server !== "vllm") return undefined;
  const url = `${serverRoot(o.baseUrl)}/tokenize`;
  const body = (text: string) =>
    o.server === "vllm"
      ? { model: o.model, prompt: text, add_special_tokens: false }
      : { content: text, add_special: false };
  const fetchImpl = resendingDropped(o.fetchImpl ?? fetch);
  return async (text, signal) => {
    try {
      const timeout = AbortSignal.timeout(o.timeoutMs ?? 5000);
      const res = await fetchImpl(url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          ...(o.apiKey ? { Authorization: `Bearer ${o.apiKey}` } : {}),
        },
        body: JSON.stringify(body(text)),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (!res.ok) return undefined;
      const json = (await res.json()) as { count?: unknown; tokens?: unknown };
      if (typeof json.count === "number" && json.count >= 0) return json.count;
      return Array.isArray(json.tokens) ? json.tokens.length : undefined;
    } catch {
      return undefined;
    }
  };
}
