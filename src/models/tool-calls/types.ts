import type { Meter } from "./meter.js";

/** Text tool-call formats of the model families people run locally. */
export const FORMAT_NAMES = [
  "hermes",
  "llama3-json",
  "mistral",
  "pythonic",
  "granite",
  "lfm2",
  "glm-4.5",
  "gemma",
  "qwen3-coder",
  "deepseek",
  "phi4-mini",
  "functionary",
  "command-r",
  "kimi-k2",
  "harmony",
  "gemma4",
  "olmo3",
  "nemotron",
  "minimax-m1",
  "minimax-m2",
  "hunyuan",
  "jamba",
  "internlm2",
  "granite-20b-fc",
  "apertus",
] as const;

export type FormatName = (typeof FORMAT_NAMES)[number];

export interface ParsedCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface ParseResult {
  calls: ParsedCall[];
  /** The text with the tool-call markup removed, trimmed. */
  content: string;
  /** The format the calls (or the broken markup) were recognised as. */
  format?: FormatName;
  /** Set when tool-call markup is present but holds no valid call: what was wrong. */
  problem?: string;
  /**
   * Entries of a call list that are not valid calls (a broken line, a missing name or arguments),
   * left out while the valid calls around them are kept: what to tell the model. Absent when none.
   */
  rejected?: RejectedCall[];
}

/** One entry of a call list that is not a valid call. */
export interface RejectedCall {
  /** The entry as the model wrote it, shortened. */
  text: string;
  /** What is wrong with it. */
  reason: string;
  /** How many calls this entry stands for (the calls past the per-reply cap); 1 when absent. */
  count?: number;
}

/** A property's JSON schema, as much as coercing text values needs. */
export interface PropertySchema {
  type?: string | string[];
  items?: unknown;
  properties?: unknown;
  anyOf?: PropertySchema[];
  oneOf?: PropertySchema[];
}

/** Per-tool JSON schemas (their properties), enough to coerce XML-style string values. */
export type ArgSchemas = Record<string, { properties?: Record<string, PropertySchema> }>;

export interface ParseOptions {
  format?: "auto" | FormatName;
  /** Only calls to these names are calls; anything else stays text. */
  toolNames?: string[];
  /** Per-tool JSON schemas, to coerce string values of XML-style formats ("5" → 5 for a number). */
  schemas?: ArgSchemas;
  /** Counts the parse's steps (meter.ts); a test reads `steps` to hold the parser linear. */
  meter?: Meter;
}

/** A call as an extractor read it, before filtering and coercion. */
export interface RawCall {
  name: string;
  arguments: unknown;
  /**
   * Values came from an XML-style format as text and may be coerced by schema. `"json"`: a value
   * is JSON text unless its schema says string (GLM's rule), so it is parsed even without a schema.
   */
  textValues?: boolean | "json";
}

/** One stretch of text an extractor claims as tool-call markup. */
export interface Extraction {
  start: number;
  end: number;
  calls: RawCall[];
  /** Markup without a valid call: why. */
  problem?: string;
  /** List entries left out because they are not valid calls (the valid ones are in `calls`). */
  rejected?: RejectedCall[];
}

export interface ExtractContext {
  /** True when the caller named the offered tools, so loose shapes (a JSON object mid-text) may count. */
  salvage: boolean;
}

export type Extractor = (text: string, ctx: ExtractContext) => Extraction[];
