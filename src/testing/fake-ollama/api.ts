/**
 * The fake Ollama's native endpoints other than chat, as Ollama answers them
 * (docs/ollama-protocol.md §9): `/` and `/api/version`, `/api/tags`, `/api/show`, `/api/ps`.
 */
import type { ServerResponse } from "node:http";
import { sendError, sendJson } from "./replies.js";
import { DIGEST, lookupModel, withTag, type FakeOllamaState } from "./state.js";
import type { FakeModel } from "./types.js";

/** `GET /` and `HEAD /`: Ollama's plain-text greeting (no body for HEAD). */
export function sendRunning(res: ServerResponse, head: boolean): void {
  res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(head ? undefined : "Ollama is running");
}

/** `/api/version`: the version the fake was given (default 0.12.10). */
export function sendVersion(res: ServerResponse, fake: FakeOllamaState): void {
  sendJson(res, 200, { version: fake.opts.version ?? "0.12.10" });
}

/** `/api/tags`: every model, tagged, with the same size, quantisation and (default) digest. */
export function sendTags(res: ServerResponse, models: Record<string, FakeModel>): void {
  sendJson(res, 200, {
    models: Object.entries(models).map(([name, m]) => ({
      name: withTag(name),
      model: withTag(name),
      modified_at: "2026-11-01T10:00:00.000000Z",
      size: 4_920_753_328,
      digest: m.digest ?? DIGEST,
      details: {
        parent_model: "",
        format: "gguf",
        family: m.family ?? "llama",
        families: [m.family ?? "llama"],
        parameter_size: "8B",
        quantization_level: "Q4_K_M",
      },
    })),
  });
}

/** `/api/show`: the named model's template, details, context length and capabilities. */
export function sendShow(
  res: ServerResponse,
  models: Record<string, FakeModel>,
  body: unknown,
): void {
  if (typeof body !== "object" || body === null) return sendError(res, 400, "missing request body");
  const name =
    (body as { model?: string; name?: string }).model ?? (body as { name?: string }).name;
  if (!name) return sendError(res, 400, "model is required");
  const m = lookupModel(models, name);
  if (!m) return sendError(res, 404, `model '${name}' not found`);
  const family = m.family ?? "llama";
  sendJson(res, 200, {
    modelfile: `FROM ${name}`,
    parameters: "temperature 0.6",
    template:
      m.template ??
      (m.capabilities.includes("tools")
        ? "{{- if .Tools }}<tools>{{ .Tools }}</tools>{{ end }}{{ .Prompt }}"
        : "{{ .Prompt }}"),
    details: {
      parent_model: "",
      format: "gguf",
      family,
      families: [family],
      parameter_size: "8B",
      quantization_level: "Q4_K_M",
    },
    model_info: {
      "general.architecture": family,
      [`${family}.context_length`]: m.contextLength ?? 8192,
    },
    capabilities: m.capabilities,
    modified_at: "2026-11-01T10:00:00.000000Z",
  });
}

/** `/api/ps`: the model kept loaded and when it expires, or none. */
export function sendPs(res: ServerResponse, fake: FakeOllamaState): void {
  const up = fake.residency.running();
  const m = up && lookupModel(fake.models, up.model);
  sendJson(res, 200, {
    models:
      up && m
        ? [
            {
              name: up.model,
              model: up.model,
              size: 4_920_753_328,
              digest: m.digest ?? DIGEST,
              expires_at: up.expiresAt.toISOString(),
              size_vram: 0,
            },
          ]
        : [],
  });
}
