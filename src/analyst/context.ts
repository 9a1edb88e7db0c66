/** The analyst's run settings: a zod schema with defaults, each field described for Studio. */
import { z } from "zod";
import { ANALYSIS_DEPTHS } from "./analyze-unit.js";
import { setting } from "../run/setting-meta.js";
import { layered, type LayerOptions } from "../run/layered.js";
import {
  ANYONE,
  modelSetting,
  ModelSettingsSchema,
  parseSettings,
  PERSON,
  settingsContext,
  type SettingsSource,
} from "../run/settings.js";

export const AnalystContextSchema = ModelSettingsSchema.pick({
  provider: true,
  ollamaUrl: true,
  baseUrl: true,
  apiKey: true,
  temperature: true,
  retries: true,
  retryBaseMs: true,
  requestTimeoutMs: true,
  contextWindow: true,
  generationBudget: true,
}).extend({
  model: modelSetting(
    'Model name as the server lists it, or "none" for the structural report without a model',
    'model as the server lists it, or "none" for the structural report',
  ),
  target: setting(z.string().default(".").describe("Folder to analyse"), { trust: "folder" }),
  depth: setting(
    z
      .enum(ANALYSIS_DEPTHS)
      .default("deep")
      .describe("quick: the start of each file; deep: every part of every file"),
    { flag: "--depth <depth>", commands: ["analyze"], ...ANYONE },
  ),
  concurrency: setting(
    z
      .number()
      .int()
      .min(1)
      .max(16)
      .default(2)
      .describe("Units analysed at once (Ollama serves parallel requests)"),
    { flag: "-c, --concurrency <n>", commands: ["analyze"], ...ANYONE },
  ),
  out: setting(
    z
      .string()
      .optional()
      .describe(
        "Markdown report path (default <target>/.keel/report.md; the JSON report goes beside it)",
      ),
    // user-only: a repository's own settings file would choose which file of yours the report
    // overwrites, and what lines its file names put there
    {
      flag: "-o, --out <file>",
      commands: ["analyze"],
      paths: true,
      ...PERSON,
      example: "/tmp/report.md",
    },
  ),
  // a limit on what is read into the prompts
  maxFileBytes: setting(
    z
      .number()
      .int()
      .positive()
      .default(1024 * 1024)
      .describe("Files larger than this are skipped"),
    PERSON,
  ),
});

export type AnalystSettings = z.output<typeof AnalystContextSchema>;
export type AnalystSettingsInput = z.input<typeof AnalystContextSchema>;

/** The analyst's settings of a run (see `parseSettings`). */
export const analystSettingsFrom = (config?: SettingsSource) =>
  parseSettings(AnalystContextSchema, config);

/**
 * The invoke/stream config of an analysis run. Each unit batch and folder batch is one step.
 * `layers` picks what the settings are read from beneath `input` (`layered`; a worker reads no
 * project's file); `profile`: the model's calibration profile's settings, the lowest layer.
 */
export function analystRunConfig(
  threadId: string,
  input: AnalystSettingsInput,
  layers?: LayerOptions["layers"],
  profile?: Record<string, unknown>,
) {
  const parsed = AnalystContextSchema.parse(
    layered(AnalystContextSchema, input, { ...(layers ? { layers } : {}), profile }),
  );
  return {
    configurable: { thread_id: threadId },
    context: settingsContext(AnalystContextSchema, parsed, {
      ...parsed,
      ollamaUrl: parsed.ollamaUrl,
      baseUrl: parsed.baseUrl,
      apiKey: parsed.apiKey,
      out: parsed.out,
    }),
    recursionLimit: 1_000_000,
    // Every batch is on disk before the next starts (the findings themselves are in the store).
    durability: "sync" as const,
  };
}
