/**
 * An OpenAI-compatible server's side of the capability probe: discovery instead of guessing.
 * `GET /v1/models` lists the models (vLLM adds `max_model_len`); llama.cpp's `GET /props` gives the
 * chat template and the context size; LM Studio's `GET /api/v0/models/<id>` gives the context length
 * and whether the model takes tools. From the template keel reads the tool-call text format, as it
 * does from Ollama's.
 */
import {
  formatFor,
  ServerHttpError,
  type DescribeModel,
  type ModelProfile,
} from "../capabilities.js";
import { serverKindOf, type ServerKind } from "./quirks.js";
import { slotWindow } from "./slots.js";

interface ModelEntry {
  id: string;
  owned_by?: string;
  /** vLLM */
  max_model_len?: number;
  /** llama.cpp's /v1/models */
  meta?: { n_ctx_train?: number; n_params?: number; size?: number };
}

interface Props {
  chat_template?: string;
  n_ctx?: number;
  total_slots?: number;
  default_generation_settings?: { n_ctx?: number };
  chat_template_caps?: { supports_tools?: boolean; supports_tool_calls?: boolean };
  /** The build that serves (llama.cpp's version, e.g. `b6000-abcdef0`). */
  build_info?: string;
  /** The model file the server loaded. */
  model_path?: string;
}

interface LmStudioModel {
  quantization?: string;
  max_context_length?: number;
  loaded_context_length?: number;
  capabilities?: string[];
  arch?: string;
}

/** The server's root (for `/props` and LM Studio's `/api/v0`): the base URL without `/v1`. */
export const serverRoot = (baseUrl: string) => baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");

const headersFor = (apiKey: string | undefined): Record<string, string> =>
  apiKey ? { Authorization: `Bearer ${apiKey}` } : {};

async function getJson<T>(
  fetchImpl: typeof fetch,
  url: string,
  apiKey: string | undefined,
): Promise<T> {
  const res = await fetchImpl(url, { headers: headersFor(apiKey) });
  const text = await res.text();
  if (!res.ok) {
    let message = text;
    try {
      const body = JSON.parse(text) as { error?: { message?: string } | string };
      message = (typeof body.error === "string" ? body.error : body.error?.message) ?? text;
    } catch {
      // a non-JSON error body is its own message
    }
    throw new ServerHttpError(message || `HTTP ${res.status}`, res.status);
  }
  return JSON.parse(text) as T;
}

/** An optional endpoint: its JSON, or undefined when the server does not have it. */
async function tryJson<T>(
  fetchImpl: typeof fetch,
  url: string,
  apiKey: string | undefined,
): Promise<T | undefined> {
  try {
    return await getJson<T>(fetchImpl, url, apiKey);
  } catch (err) {
    if (err instanceof ServerHttpError || err instanceof SyntaxError) return undefined;
    throw err;
  }
}

/** The models an OpenAI-compatible server lists (`GET /v1/models`). */
export async function listOpenAIModels(
  fetchImpl: typeof fetch,
  baseUrl: string,
  apiKey: string | undefined,
): Promise<ModelEntry[]> {
  const body = await getJson<{ data?: ModelEntry[] }>(
    fetchImpl,
    `${baseUrl.replace(/\/+$/, "")}/models`,
    apiKey,
  );
  return body.data ?? [];
}

/** What a server answered to discovery: which server it is, its models, and its own endpoints. */
export interface Discovery {
  kind: ServerKind;
  models: ModelEntry[];
  /** The model asked about (or the first listed). */
  entry?: ModelEntry;
  props?: Props;
  lms?: LmStudioModel;
  /** llama.cpp: the context of one slot (the request's real window) and how many slots there are. */
  slots?: { window?: number; total: number };
}

/**
 * Which OpenAI-compatible server answers at `baseUrl` and what it says of `model` (else its first
 * model): `/v1/models`, llama.cpp's `/props` (and `/slots` when it has several), LM Studio's
 * `/api/v0/models/<id>`. The one detection `keel models`, `keel doctor` and the runs share.
 */
export async function discoverServer(
  fetchImpl: typeof fetch,
  baseUrl: string,
  apiKey: string | undefined,
  model?: string,
): Promise<Discovery> {
  const models = await listOpenAIModels(fetchImpl, baseUrl, apiKey);
  const entry =
    model === undefined
      ? models[0]
      : (models.find((m) => m.id === model) ??
        models.find((m) => m.id.toLowerCase().endsWith(`/${model.toLowerCase()}`)));
  const root = serverRoot(baseUrl);
  const props = await tryJson<Props>(fetchImpl, `${root}/props`, apiKey);
  const lms = entry
    ? await tryJson<LmStudioModel>(
        fetchImpl,
        `${root}/api/v0/models/${encodeURIComponent(entry.id)}`,
        apiKey,
      )
    : undefined;
  const kind = serverKindOf({
    props: props !== undefined && typeof props.chat_template === "string",
    lmstudioApi: lms !== undefined && (lms.max_context_length !== undefined || !!lms.arch),
    maxModelLen: entry?.max_model_len !== undefined,
    modelId: entry?.id ?? "",
    ...(entry?.owned_by ? { ownedBy: entry.owned_by } : {}),
  });
  const total = props?.total_slots ?? 1;
  const listed =
    kind === "llama.cpp" && total > 1
      ? await tryJson<Array<{ n_ctx?: number }>>(fetchImpl, `${root}/slots`, apiKey)
      : undefined;
  const window = props
    ? slotWindow({
        ...(props.n_ctx ? { nCtx: props.n_ctx } : {}),
        ...(props.default_generation_settings?.n_ctx
          ? { slotCtx: props.default_generation_settings.n_ctx }
          : {}),
        totalSlots: total,
        ...(Array.isArray(listed) ? { slots: listed.map((s) => s.n_ctx ?? 0) } : {}),
      })
    : undefined;
  return {
    kind,
    models,
    ...(entry ? { entry } : {}),
    ...(props ? { props, slots: { ...(window ? { window } : {}), total } } : {}),
    ...(lms ? { lms } : {}),
  };
}

/**
 * The model's profile from what the server says about it. Throws a 404 for a model it lacks — but
 * a llama-server serving one model answers under any name (it does not read the request's
 * `model`), so there any name is that model, as the server itself would have it.
 */
export const describeOpenAIModel: DescribeModel = async (fetchImpl, baseUrl, model, apiKey) => {
  const found = await discoverServer(fetchImpl, baseUrl, apiKey, model);
  const { props, lms } = found;
  const entry =
    found.entry ??
    (found.kind === "llama.cpp" && found.models.length === 1 ? found.models[0] : undefined);
  if (!entry) {
    const ids = found.models.map((m) => m.id).join(", ") || "none";
    throw new ServerHttpError(`model "${model}" not found; the server lists: ${ids}`, 404);
  }
  const contextLength =
    found.slots?.window ??
    lms?.loaded_context_length ??
    lms?.max_context_length ??
    entry.max_model_len ??
    entry.meta?.n_ctx_train;
  const caps = props?.chat_template_caps;
  const tools =
    caps?.supports_tool_calls ??
    caps?.supports_tools ??
    (lms?.capabilities ? lms.capabilities.includes("tool_use") : true);
  const family = entry.id.split("/").at(-1)!.toLowerCase();
  const profile: ModelProfile = {
    model: entry.id,
    capabilities: ["completion", ...(tools ? ["tools"] : [])],
    family,
    ...(contextLength ? { contextLength } : {}),
    format: formatFor(props?.chat_template, family),
    server: found.kind,
  };
  return profile;
};
