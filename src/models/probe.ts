/** The capability probe of a run, cached, with each provider's discovery. */
import type { CapabilityProbe, ModelProfile } from "./capabilities.js";
import { describeOllamaModel } from "./ollama/probe.js";
import { describeOpenAIModel } from "./openai/probe.js";
import { withModelRetry } from "./retry.js";

/**
 * A probe with its own cache: one description per (server, model) for the life of the probe, from
 * the provider's discovery (Ollama's `/api/show`; an OpenAI-compatible server's `/v1/models`,
 * `/props`, …), chosen by the policy's provider.
 */
export function createCapabilityProbe(fetchImpl: typeof fetch = fetch): CapabilityProbe {
  const cache = new Map<string, Promise<ModelProfile>>();
  return (url, model, policy) => {
    const describe = policy.provider === "openai" ? describeOpenAIModel : describeOllamaModel;
    const key = `${policy.provider ?? "ollama"}\n${url}\n${model}`;
    let hit = cache.get(key);
    if (!hit) {
      hit = withModelRetry(() => describe(fetchImpl, url, model, policy.apiKey), policy);
      cache.set(key, hit);
      hit.catch(() => cache.delete(key));
    }
    return hit;
  };
}
