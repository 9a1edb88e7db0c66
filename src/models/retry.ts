/**
 * A model call that fails, tried again: a request whose connection dropped before any answer is
 * sent again at once (`resendingDropped`); a transient failure is retried with backoff
 * (`withModelRetry`).
 *
 * Resending: llama-server closes its connection after every response while announcing keep-alive
 * (`Keep-Alive: timeout=5, max=100`): a request the client sends on that pooled connection before
 * it has read the close meets "other side closed". On a real llama-server this was 3 of 9 turns
 * of a run, each costing a retry's backoff (0.4–0.6 s) and a "request failed" line. The server
 * never read such a request, so sending it again is safe, and is done without a wait, a few times
 * (the client's pool can hold several connections the server closed, each dropping one send);
 * any other failure is the retry's.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { Provider } from "./provider.js";
import { classifyModelError, ModelServerError, type ClassifiedError } from "./errors.js";

export interface RetryPolicy {
  retries: number;
  baseMs: number;
  /** Cap on one delay. */
  maxMs?: number;
  url: string;
  model: string;
  /** The server's kind, for the error people read and the discovery to use (default ollama). */
  provider?: Provider;
  /** Credentials for the server's own endpoints (an OpenAI-compatible server's discovery). */
  apiKey?: string;
  /** Most ms a discovery request waits for its reply (the run's `requestTimeoutMs`; probe.ts caps it). */
  timeoutMs?: number;
  onRetry?: (info: { attempt: number; delayMs: number; error: ClassifiedError }) => void;
  signal?: AbortSignal;
}

/** Fewer retries when nothing listens at the URL: a down server rarely comes up within seconds. */
export const UNREACHABLE_RETRIES = 2;

/**
 * Runs a model call, retrying transient failures (503, dropped connection, timeout, a stream cut
 * short) with exponential backoff and jitter. Throws `ModelServerError` when the failure is final
 * (404, 400) or the retries are spent. ChatOllama itself never retries (docs/ollama-protocol.md §7).
 */
export async function withModelRetry<T>(call: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  let attempt = 0;
  for (;;) {
    attempt++;
    try {
      return await call();
    } catch (err) {
      if ((err as Error)?.name === "GraphInterrupt" || policy.signal?.aborted) throw err;
      const c = classifyModelError(err);
      const budget =
        c.kind === "unreachable" ? Math.min(UNREACHABLE_RETRIES, policy.retries) : policy.retries;
      if (!c.retryable || attempt > budget) {
        throw new ModelServerError(c.kind, policy.url, policy.model, c.message, attempt, {
          ...(policy.provider ? { provider: policy.provider } : {}),
          ...(c.fix ? { fix: c.fix } : {}),
          ...(c.context ? { context: c.context } : {}),
        });
      }
      const exp = policy.baseMs * 2 ** (attempt - 1);
      const delayMs = Math.min(policy.maxMs ?? 30_000, exp) * (0.75 + Math.random() * 0.5);
      policy.onRetry?.({ attempt, delayMs: Math.round(delayMs), error: c });
      // a stopped run does not wait out a backoff
      await delay(delayMs, undefined, { signal: policy.signal }).catch(() => undefined);
      if (policy.signal?.aborted) throw err;
    }
  }
}

/** How many times one request is sent again after drops: more than a pool holds dead connections. */
const RESENDS = 4;

/** Whether a fetch failed because its connection was closed or reset before any answer. */
export function closedUnanswered(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === "UND_ERR_SOCKET" || code === "ECONNRESET";
}

/** `base`, sending a request again at once when its connection closed before any answer. */
export function resendingDropped(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    // a Request carries a body that cannot be read twice; a stream body neither
    const again =
      !(input instanceof Request) &&
      (init?.body === undefined || init.body === null || typeof init.body === "string");
    for (let resends = 0; ; resends++) {
      try {
        return await base(input, init);
      } catch (err) {
        if (!again || resends === RESENDS || init?.signal?.aborted || !closedUnanswered(err))
          throw err;
      }
    }
  };
}
