/**
 * Ollama's side of the capability probe: `POST /api/show` → capabilities, family, trained context
 * and the tool-call text format of the model's chat template.
 */
import { formatFor, ServerHttpError, type DescribeModel } from "../capabilities.js";

interface ShowResponse {
  capabilities?: string[];
  template?: string;
  details?: { family?: string };
  model_info?: Record<string, unknown>;
}

/** Ollama's description of a model: `POST /api/show`. */
export const describeOllamaModel: DescribeModel = async (fetchImpl, url, model) => {
  const res = await fetchImpl(`${url.replace(/\/$/, "")}/api/show`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model }),
  });
  const text = await res.text();
  if (!res.ok) {
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: string }).error ?? text;
    } catch {
      // a non-JSON error body is its own message
    }
    throw new ServerHttpError(message || `HTTP ${res.status}`, res.status);
  }
  const body = JSON.parse(text) as ShowResponse;
  const family = body.details?.family;
  const ctxKey = Object.keys(body.model_info ?? {}).find((k) => k.endsWith(".context_length"));
  const contextLength = ctxKey ? Number(body.model_info![ctxKey]) : undefined;
  return {
    model,
    capabilities: body.capabilities ?? [],
    ...(family ? { family } : {}),
    ...(contextLength ? { contextLength } : {}),
    format: formatFor(body.template, family),
  };
};
