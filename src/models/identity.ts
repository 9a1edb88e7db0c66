/**
 * Which server and which model a run talks to, precisely enough to tell when what keel measured of
 * them (a calibration profile) no longer holds: the server's kind and version, the model as the
 * server names it, and its digest — Ollama's content digest, or where a server has none, what it
 * says of the file it loaded (llama.cpp: its path, size and parameter count; LM Studio: its
 * quantisation). An empty `version` or `digest` means the server does not say.
 */
import { createHash } from "node:crypto";
import { ServerHttpError } from "./capabilities.js";
import { discoverServer, serverRoot } from "./openai/probe.js";
import type { ServerKind } from "./openai/quirks.js";
import type { Provider } from "./provider.js";

export interface ServerIdentity {
  /** Ollama, or the OpenAI-compatible server discovery named. */
  server: "ollama" | ServerKind;
  /** The server's version ("" when it does not say). */
  version: string;
  /** The model as the server names it. */
  model: string;
  /** The model's digest, or a fingerprint of the file it loaded ("" when the server says nothing of it). */
  digest: string;
  /** The quantisation, where the server names it (Ollama's `quantization_level`, LM Studio's). */
  quantization?: string;
}

interface OllamaTag {
  name?: string;
  model?: string;
  digest?: string;
  details?: { quantization_level?: string };
}

const withTag = (name: string) => (name.includes(":") ? name : `${name}:latest`);

async function json<T>(fetchImpl: typeof fetch, url: string, init?: RequestInit): Promise<T> {
  const res = await fetchImpl(url, init);
  const text = await res.text();
  if (!res.ok) throw new ServerHttpError(text.slice(0, 200) || `HTTP ${res.status}`, res.status);
  return JSON.parse(text) as T;
}

/** Ollama: `/api/version`, and the model's digest and quantisation from `/api/tags`. */
async function identifyOllama(
  fetchImpl: typeof fetch,
  url: string,
  model: string,
): Promise<ServerIdentity> {
  const root = url.replace(/\/+$/, "");
  const [version, tags] = await Promise.all([
    json<{ version?: string }>(fetchImpl, `${root}/api/version`),
    json<{ models?: OllamaTag[] }>(fetchImpl, `${root}/api/tags`),
  ]);
  const wanted = withTag(model);
  const tag = tags.models?.find((m) => withTag(m.name ?? m.model ?? "") === wanted);
  if (!tag) throw new ServerHttpError(`model '${model}' not found`, 404);
  return {
    server: "ollama",
    version: version.version ?? "",
    model: wanted,
    digest: tag.digest ?? "",
    ...(tag.details?.quantization_level ? { quantization: tag.details.quantization_level } : {}),
  };
}

const fingerprint = (parts: unknown[]) =>
  `file:${createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16)}`;

/** An OpenAI-compatible server: discovery's kind and model, its version and the file it loaded. */
async function identifyOpenAI(
  fetchImpl: typeof fetch,
  url: string,
  model: string,
  apiKey: string | undefined,
): Promise<ServerIdentity> {
  const found = await discoverServer(fetchImpl, url, apiKey, model);
  // a llama-server serving one model answers to any name: that model
  const entry =
    found.entry ??
    (found.kind === "llama.cpp" && found.models.length === 1 ? found.models[0] : undefined);
  if (!entry) throw new ServerHttpError(`model "${model}" not found`, 404);
  const headers: Record<string, string> = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
  const vllm =
    found.kind === "vllm"
      ? await json<{ version?: string }>(fetchImpl, `${serverRoot(url)}/version`, {
          headers,
        }).catch(() => undefined)
      : undefined;
  const version = found.props?.build_info ?? vllm?.version ?? "";
  const meta = entry.meta;
  const digest =
    found.kind === "llama.cpp"
      ? fingerprint([found.props?.model_path ?? entry.id, meta?.size, meta?.n_params])
      : found.lms?.quantization
        ? fingerprint([entry.id, found.lms.quantization])
        : "";
  return {
    server: found.kind,
    version,
    model: entry.id,
    digest,
    ...(found.lms?.quantization ? { quantization: found.lms.quantization } : {}),
  };
}

/** The server and model at `url` (no retries: a caller that cannot reach it decides what that means). */
export function identifyServer(
  fetchImpl: typeof fetch,
  provider: Provider,
  url: string,
  model: string,
  apiKey?: string,
): Promise<ServerIdentity> {
  return provider === "openai"
    ? identifyOpenAI(fetchImpl, url, model, apiKey)
    : identifyOllama(fetchImpl, url, model);
}
