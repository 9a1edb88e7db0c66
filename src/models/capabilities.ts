/**
 * The capability probe: `POST /api/show` once per model → its capabilities, family, context length
 * and the text format its chat template uses for tool calls. From it keel picks one tool channel
 * (F9): native when the model has the `tools` capability, else tools described in the prompt.
 */
import { FORMATS } from "./tool-calls/formats.js";
import type { FormatName } from "./tool-calls/types.js";
import type { ServerKind } from "./openai/quirks.js";
import type { RetryPolicy } from "./retry.js";

export interface ModelProfile {
  model: string;
  capabilities: string[];
  family?: string;
  contextLength?: number;
  /** The text format the template's tool markup points at (what prompt mode asks for and parses first). */
  format: FormatName;
  /** provider openai: which server it is (its quirks). */
  server?: ServerKind;
}

/** How a model's tool calls travel: the API's tool channel, or text in the reply (F9). */
export const TOOL_MODES = ["native", "prompt"] as const;
export type ToolMode = (typeof TOOL_MODES)[number];
/** The tool-mode setting: a mode, or auto (the model's capabilities choose). */
export const TOOL_MODE_SETTINGS = ["auto", ...TOOL_MODES] as const;
export type ToolModeSetting = (typeof TOOL_MODE_SETTINGS)[number];

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
  requested: ToolModeSetting,
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

/** An HTTP failure shaped like ollama-js's ResponseError, so one classifier handles both. */
export class ServerHttpError extends Error {
  override name = "ResponseError";
  constructor(
    message: string,
    readonly status_code: number,
  ) {
    super(message);
  }
}

/** Reads a model's profile from its server (no retries, no cache). */
export type DescribeModel = (
  fetchImpl: typeof fetch,
  url: string,
  model: string,
  apiKey: string | undefined,
) => Promise<ModelProfile>;

export type CapabilityProbe = (
  url: string,
  model: string,
  policy: RetryPolicy,
) => Promise<ModelProfile>;
