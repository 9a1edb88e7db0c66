/** `keel models`: what each model on the server offers keel, and why it does or doesn't call tools. */
import pc from "picocolors";
import { table } from "./table.js";
import { chooseToolMode, type ModelProfile, type ToolMode } from "../models/capabilities.js";
import { createCapabilityProbe, PROBE_TIMEOUT_MS, withReplyDeadline } from "../models/probe.js";
import { ServerHttpError } from "../models/capabilities.js";
import { ModelServerError, ProtocolError, readableBody } from "../models/errors.js";
import { listOpenAIModels } from "../models/openai/probe.js";
import { QUIRKS, SERVER_KINDS } from "../models/openai/quirks.js";
import type { Provider } from "../models/provider.js";
import { withModelRetry, type RetryPolicy } from "../models/retry.js";
import { describeProfileUse, profileOf, type ProfileUse } from "../run/profile-use.js";
import { ContextSchema } from "../coder/context.js";

export interface ModelRow extends ModelProfile {
  toolMode: ToolMode;
  /** The model's calibration profile on this server: applied, stale, or why none. */
  profile: ProfileUse;
}

/** The server to list: its kind, URL and key. */
export interface ListedServer {
  provider: Provider;
  url: string;
  apiKey?: string;
}

/** The names of the models a server has: Ollama's `/api/tags`, an OpenAI-compatible `/v1/models`. */
async function modelNames(server: ListedServer, fetchImpl: typeof fetch): Promise<string[]> {
  if (server.provider === "openai")
    return (await listOpenAIModels(fetchImpl, server.url, server.apiKey).catch(notFound)).map(
      (m) => m.id,
    );
  const res = await fetchImpl(`${server.url.replace(/\/$/, "")}/api/tags`);
  if (res.status === 404)
    throw new ProtocolError("GET /api/tags answered 404: no Ollama API at this URL");
  if (!res.ok) throw new ServerHttpError(`GET /api/tags answered ${res.status}`, res.status);
  const tags = (await res.json()) as { models?: Array<{ name: string }> };
  return (tags.models ?? []).map((m) => m.name);
}

/** A listing the server does not have: it is not the kind of server the provider names. */
function notFound(err: unknown): never {
  if (err instanceof ServerHttpError && err.status_code === 404)
    throw new ProtocolError(`GET /models answered 404, ${readableBody(err.message)}`);
  throw err;
}

/** Lists the server's models with their capabilities, tool mode and text format. */
export async function listModels(
  server: ListedServer,
  retries = 2,
  fetchImpl: typeof fetch = fetch,
): Promise<ModelRow[]> {
  const policy: RetryPolicy = {
    retries,
    baseMs: 300,
    url: server.url,
    model: "",
    provider: server.provider,
    ...(server.apiKey ? { apiKey: server.apiKey } : {}),
  };
  const timed = withReplyDeadline(fetchImpl, PROBE_TIMEOUT_MS);
  const names = await withModelRetry(() => modelNames(server, timed), policy);
  const probe = createCapabilityProbe(fetchImpl);
  const rows: ModelRow[] = [];
  for (const name of names) {
    const profile = await probe(server.url, name, { ...policy, model: name });
    const calibration = await profileOf(ContextSchema, {
      provider: server.provider,
      model: name,
      ...(server.provider === "openai" ? { baseUrl: server.url } : { ollamaUrl: server.url }),
      ...(server.apiKey ? { apiKey: server.apiKey } : {}),
    });
    const applied = calibration.use.status === "applied" ? calibration.use.toolMode : undefined;
    rows.push({
      ...profile,
      toolMode: applied ?? chooseToolMode(profile, "auto"),
      profile: calibration.use,
    });
  }
  return rows;
}

/** How each OpenAI-compatible server is started with tool calling on (help texts, README). */
export function startCommands(): string {
  return SERVER_KINDS.filter((k) => k !== "generic")
    .map((k) => `  ${QUIRKS[k].label.padEnd(24)} ${QUIRKS[k].start}`)
    .join("\n");
}

/** The table people read. */
export function formatModels(rows: ModelRow[], url: string, provider: Provider = "ollama"): string {
  if (rows.length === 0)
    return provider === "openai"
      ? `No models on ${url}. Load one in the server (see \`keel models --help\`).`
      : `No models on ${url}. Download one with \`ollama pull qwen3:8b\`.`;
  const head = [
    "MODEL",
    "FAMILY",
    "CONTEXT",
    "CAPABILITIES",
    "TOOL MODE",
    "TEXT FORMAT",
    "PROFILE",
  ];
  const body = rows.map((r) => [
    r.model,
    r.family ?? "?",
    r.contextLength ? String(r.contextLength) : "?",
    r.capabilities.join(","),
    r.capabilities.includes("completion") ? r.toolMode : "— (cannot chat)",
    r.format,
    r.profile.status === "applied" || r.profile.status === "stale" ? r.profile.status : "—",
  ]);
  const profiles = rows
    .filter((r) => r.profile.status === "applied" || r.profile.status === "stale")
    .map((r) => pc.dim(`${r.model}: ${describeProfileUse(r.profile)}`));
  const server = rows[0]?.server;
  return [
    ...(server ? [pc.dim(`${QUIRKS[server].label} at ${url}`)] : []),
    ...table(head, body),
    "",
    pc.dim(
      "native: the model has the tools capability; keel sends tools in the request's tools field.",
    ),
    pc.dim(
      "prompt: no tools capability; keel describes each tool once in the system prompt and reads calls",
    ),
    pc.dim("        written in the TEXT FORMAT column. Force either with `keel run --tool-mode`."),
    pc.dim(
      "PROFILE: what keel calibrate measured of the model here (keel calibrate -m MODEL --show).",
    ),
    ...profiles,
  ].join("\n");
}

export { ModelServerError };
