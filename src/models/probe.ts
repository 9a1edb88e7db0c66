/** The capability probe of a run, cached, with each provider's discovery. */
import type { CapabilityProbe, ModelProfile } from "./capabilities.js";
import { NoReplyError } from "./errors.js";
import { describeOllamaModel } from "./ollama/probe.js";
import { describeOpenAIModel } from "./openai/probe.js";
import { withModelRetry } from "./retry.js";

/**
 * Most ms keel waits for a discovery request's whole reply (`/api/show`, `/api/tags`,
 * `/v1/models`, …): the server's first contact. A server answers them at once; a socket that
 * accepts and stays silent would otherwise hold the run before its first turn forever.
 */
export const PROBE_TIMEOUT_MS = 10_000;

/**
 * A `fetch` whose request, headers and body must all arrive within `ms`, else it rejects with a
 * `NoReplyError` (“no reply from <url> within N s”), which is not retried. The reply is read whole
 * (discovery replies are small JSON), so the deadline covers the body too.
 */
export function withReplyDeadline(fetchImpl: typeof fetch, ms: number): typeof fetch {
  return async (input, init) => {
    const deadline = AbortSignal.timeout(ms);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    const url = input instanceof Request ? input.url : String(input);
    try {
      const res = await fetchImpl(input, { ...init, signal });
      const body = await res.arrayBuffer();
      return new Response(body, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    } catch (err) {
      if (deadline.aborted && !init?.signal?.aborted) throw new NoReplyError(url, ms);
      throw err;
    }
  };
}

/**
 * A probe with its own cache: one description per (server, model) for the life of the probe, from
 * the provider's discovery (Ollama's `/api/show`; an OpenAI-compatible server's `/v1/models`,
 * `/props`, …), chosen by the policy's provider. Each request waits at most `PROBE_TIMEOUT_MS`, or
 * the policy's `timeoutMs` (the run's `requestTimeoutMs`) when shorter.
 */
export function createCapabilityProbe(fetchImpl: typeof fetch = fetch): CapabilityProbe {
  const cache = new Map<string, Promise<ModelProfile>>();
  return (url, model, policy) => {
    const describe = policy.provider === "openai" ? describeOpenAIModel : describeOllamaModel;
    const key = `${policy.provider ?? "ollama"}\n${url}\n${model}`;
    let hit = cache.get(key);
    if (!hit) {
      const timed = withReplyDeadline(
        fetchImpl,
        Math.min(policy.timeoutMs ?? PROBE_TIMEOUT_MS, PROBE_TIMEOUT_MS),
      );
      hit = withModelRetry(() => describe(timed, url, model, policy.apiKey), policy);
      cache.set(key, hit);
      hit.catch(() => cache.delete(key));
    }
    return hit;
  };
}
