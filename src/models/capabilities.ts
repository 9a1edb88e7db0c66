/**
 * The capability probe: `POST /api/show` once per model → its capabilities, family, context length
 * and the text format its chat template uses for tool calls. From it keel picks one tool channel
 * (F9): native when the model has the `tools` capability, else tools described in the prompt.
 */
import { FORMATS } from "./tool-calls/formats.js";
import type { FormatName } from "./tool-calls/types.js";
import { withModelRetry, type RetryPolicy } from "./retry.js";

export interface ModelProfile {
  model: string;
  capabilities: string[];
  family?: string;
  contextLength?: number;
  /** The text format the template's tool markup points at (what prompt mode asks for and parses first). */
  format: FormatName;
}

export type ToolMode = "native" | "prompt";

/** The text tool-call format for a model, from its template and family; Hermes-style JSON otherwise. */
export function formatFor(template: string | undefined, family: string | undefined): FormatName {
  // Template markers first (they are what the model was trained on), then the family.
  for (const f of FORMATS) if (template && f.template?.test(template)) return f.name;
  for (const f of FORMATS) if (family && f.family?.test(family.toLowerCase())) return f.name;
  return "hermes";
}

/** auto → native iff the model has the tools capability; an explicit mode wins. */
export function chooseToolMode(
  profile: Pick<ModelProfile, "capabilities"> | undefined,
  requested: "auto" | ToolMode,
): ToolMode {
  if (requested !== "auto") return requested;
  return !profile || profile.capabilities.includes("tools") ? "native" : "prompt";
}

/**
 * The window a run uses with this model: the requested one, never above the model's trained
 * context (Ollama clamps num_ctx there and then cuts the prompt's front silently). Every budget of
 * the run uses this one number.
 */
export function windowFor(
  requested: number,
  profile: Pick<ModelProfile, "contextLength"> | undefined,
): number {
  return Math.min(requested, profile?.contextLength ?? Infinity);
}

/** The thinking levels a model that takes levels (gpt-oss) accepts in `think`. */
export const THINK_LEVELS = ["low", "medium", "high"] as const;
/** The run's thinking setting (`--think`): the one list the settings schema and the CLI read. */
export const THINK_SETTINGS = ["auto", "on", "off", ...THINK_LEVELS] as const;
export type ThinkSetting = (typeof THINK_SETTINGS)[number];
/** Ollama's `think` field as keel sends it. */
export type ThinkField = boolean | (typeof THINK_LEVELS)[number];

/**
 * The `think` field for a model: nothing for a model without the thinking capability; a level only
 * where the model takes levels (gpt-oss), else on; `auto` is the server's own default (on), sent
 * explicitly so the request says what it gets.
 */
export function thinkFor(
  setting: ThinkSetting,
  profile: Pick<ModelProfile, "capabilities" | "format"> | undefined,
): ThinkField | undefined {
  if (!profile?.capabilities.includes("thinking")) return undefined;
  if (setting === "off") return false;
  if (setting === "auto" || setting === "on") return true;
  return profile.format === "harmony" ? setting : true;
}

interface ShowResponse {
  capabilities?: string[];
  template?: string;
  details?: { family?: string };
  model_info?: Record<string, unknown>;
}

/** An HTTP failure shaped like ollama-js's ResponseError, so one classifier handles both. */
class ShowError extends Error {
  override name = "ResponseError";
  constructor(
    message: string,
    readonly status_code: number,
  ) {
    super(message);
  }
}

export type CapabilityProbe = (
  url: string,
  model: string,
  policy: RetryPolicy,
) => Promise<ModelProfile>;

/** A probe with its own cache: one `/api/show` per (server, model) for the life of the probe. */
export function createCapabilityProbe(fetchImpl: typeof fetch = fetch): CapabilityProbe {
  const cache = new Map<string, Promise<ModelProfile>>();
  return (url, model, policy) => {
    const key = `${url}\n${model}`;
    let hit = cache.get(key);
    if (!hit) {
      hit = withModelRetry(() => show(fetchImpl, url, model), policy);
      cache.set(key, hit);
      hit.catch(() => cache.delete(key));
    }
    return hit;
  };
}

async function show(fetchImpl: typeof fetch, url: string, model: string): Promise<ModelProfile> {
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
    throw new ShowError(message || `HTTP ${res.status}`, res.status);
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
}
