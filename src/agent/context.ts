/**
 * Run settings: one zod schema with defaults, each field described so LangGraph Studio shows help
 * text. Read by every node through `settingsFrom(config)`.
 */
import { z } from "zod";
import { readEnv } from "../env.js";
import type { LoopSettings } from "../guard/loop.js";

export const DEFAULT_MODEL = "qwen3:8b";
export const DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434";

export const ContextSchema = z.object({
  model: z
    .string()
    .default(DEFAULT_MODEL)
    .describe("Ollama model name, e.g. qwen3:8b (must support tools in native mode)"),
  ollamaUrl: z
    .string()
    .optional()
    .describe(
      "Base URL of the Ollama server; unset means OLLAMA_HOST, else http://127.0.0.1:11434",
    ),
  workspace: z
    .string()
    .default(".")
    .describe("Folder the agent may read and write; every path is confined to it"),
  maxTurns: z.number().int().min(1).default(40).describe("Most model turns (act calls) in one run"),
  maxToolCalls: z.number().int().min(1).default(120).describe("Most tool calls in one run"),
  toolMode: z
    .enum(["auto", "native", "prompt"])
    .default("auto")
    .describe(
      "How tools reach the model: native (the tools field) or prompt (described once in the system prompt, calls parsed from text); auto picks native iff Ollama lists the tools capability",
    ),
  interactive: z
    .boolean()
    .default(false)
    .describe(
      "Ask a human (interrupt) for approvals and when recovery runs out, instead of ending",
    ),
  autoApprove: z
    .boolean()
    .default(false)
    .describe("Approve commands that reach beyond the workspace (the CLI's --yes)"),
  temperature: z.number().min(0).max(2).default(0.2).describe("Sampling temperature for the model"),
  think: z
    .enum(["auto", "on", "off", "low", "medium", "high"])
    .default("auto")
    .describe(
      "Thinking for models with the thinking capability: on, off, or a level (low|medium|high, for models that take levels such as gpt-oss; others think on). auto: the server's default (on). Structured requests never think",
    ),
  contextWindow: z
    .number()
    .int()
    .min(1024)
    .default(16384)
    .describe(
      "Context window keel asks Ollama for (num_ctx), capped by the model's own; every request is kept under it",
    ),
  retries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(4)
    .describe("Retries of a failed model request (503, dropped connection, timeout)"),
  retryBaseMs: z
    .number()
    .int()
    .min(0)
    .default(500)
    .describe("First retry delay in ms; doubles each retry"),
  requestTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(300_000)
    .describe("Most ms to wait for the model's first byte, and between streamed lines"),
  commandTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(120_000)
    .describe("Default time limit of run_command"),
  errorStreak: z
    .number()
    .int()
    .min(1)
    .default(3)
    .describe("Consecutive failed tool calls that trigger recovery"),
  recoveryHints: z
    .number()
    .int()
    .min(0)
    .default(1)
    .describe(
      "Recovery ladder: strikes of one failure kind answered with a hint before re-planning",
    ),
  recoveryReplans: z
    .number()
    .int()
    .min(0)
    .default(1)
    .describe(
      "Recovery ladder: re-plans before the forced summary turn and the end (or asking a human)",
    ),
  loopRepeatExplore: z
    .number()
    .int()
    .min(2)
    .default(3)
    .describe("Loop guard: identical read-only calls in a row that make a loop"),
  loopRepeatMutate: z
    .number()
    .int()
    .min(2)
    .default(2)
    .describe("Loop guard: identical file-changing calls in a row that make a loop"),
  loopRepeatCommand: z
    .number()
    .int()
    .min(2)
    .default(3)
    .describe("Loop guard: identical commands in a row, with identical output, that make a loop"),
  loopWindowCount: z
    .number()
    .int()
    .min(2)
    .default(4)
    .describe("Loop guard: the same call this many times among the last loopWindowSize calls"),
  loopWindowSize: z
    .number()
    .int()
    .min(3)
    .default(12)
    .describe("Loop guard: how many recent calls the window detectors look at"),
  loopCycles: z
    .number()
    .int()
    .min(2)
    .default(3)
    .describe("Loop guard: full A-B-A-B (or A-B-C) cycles that make a loop"),
  loopNoProgress: z
    .number()
    .int()
    .min(2)
    .default(3)
    .describe("Loop guard: the same call returning the same result this many times"),
  loopWobble: z
    .number()
    .int()
    .min(3)
    .default(5)
    .describe(
      "Loop guard: the same tool on the same target with slightly changed arguments, this many times in a row",
    ),
});

export type Settings = z.output<typeof ContextSchema>;
export type SettingsInput = z.input<typeof ContextSchema>;

/** Where a node finds its run's settings. */
export interface SettingsSource {
  context?: unknown;
  configurable?: Record<string, unknown>;
}

/**
 * A run's settings under `schema`: the run's `context` (LangGraph ≥ 1) or, for older clients,
 * `configurable`, with defaults applied and `ollamaUrl` resolved from OLLAMA_HOST when unset.
 *
 * Every node asks for them, so they are parsed once per run: the result is kept with the run's
 * context object (and the configurable values it was parsed from) and returned frozen.
 */
export function parseSettings<S extends z.ZodObject>(
  schema: S,
  config?: SettingsSource,
): Readonly<z.output<S> & { ollamaUrl: string }> {
  type Out = Readonly<z.output<S> & { ollamaUrl: string }>;
  const context = config?.context;
  const configurable = config?.configurable ?? {};
  const run = typeof context === "object" && context !== null ? context : undefined;
  const inputs = Object.keys(schema.shape).map((k) => configurable[k]);
  const hit = run && parsed.get(run)?.get(schema);
  if (hit && hit.inputs.every((v, i) => v === inputs[i])) return hit.value as Out;
  const s = schema.parse({ ...envDefaults(), ...configurable, ...run }) as z.output<S> & {
    ollamaUrl?: string;
  };
  const value = Object.freeze({
    ...s,
    ollamaUrl: s.ollamaUrl ?? readEnv().ollamaHost ?? DEFAULT_OLLAMA_URL,
  }) as Out;
  if (run)
    parsed.set(
      run,
      (parsed.get(run) ?? new Map<z.ZodObject, ParsedSettings>()).set(schema, { inputs, value }),
    );
  return value;
}

interface ParsedSettings {
  inputs: unknown[];
  value: unknown;
}
const parsed = new WeakMap<object, Map<z.ZodObject, ParsedSettings>>();

/**
 * Settings the environment supplies where a run does not say: `KEEL_MODEL`, `OLLAMA_HOST`. The same
 * for every entry point — the CLI, Studio and the LangGraph server, `runAgent` and `runAnalysis`.
 */
export function envDefaults(): { model?: string; ollamaUrl?: string } {
  const env = readEnv();
  return {
    ...(env.model ? { model: env.model } : {}),
    ...(env.ollamaHost ? { ollamaUrl: env.ollamaHost } : {}),
  };
}

/** The default of a run setting, as the schema declares it (for help texts). */
export function settingDefault<K extends keyof typeof ContextSchema.shape>(key: K): unknown {
  return ContextSchema.shape[key].parse(undefined);
}

/** The coder's settings of a run (see `parseSettings`). */
export const settingsFrom = (config?: SettingsSource) => parseSettings(ContextSchema, config);

/** LangGraph's recursion limit follows from the budgets: each tool call and each turn is a step. */
export function recursionLimitFor(s: Pick<Settings, "maxTurns" | "maxToolCalls">): number {
  return 10 + s.maxTurns * 3 + s.maxToolCalls;
}

/** The invoke/stream config of a coder run: thread, validated context and the derived recursion limit. */
export function runConfig(threadId: string, input: SettingsInput) {
  const parsed = ContextSchema.parse({ ...envDefaults(), ...input });
  // LangGraph's context type wants every key present, optional ones as explicit undefined.
  const context = { ...parsed, ollamaUrl: parsed.ollamaUrl };
  return {
    configurable: { thread_id: threadId },
    context,
    recursionLimit: recursionLimitFor(context),
    // Each step is on disk before the next starts: a killed run resumes from its last step. (Commands
    // are also journaled in the store, so one cut off between its effect and its checkpoint is
    // never run twice.)
    durability: "sync" as const,
  };
}

/** The loop guard's settings from the run settings. */
export function loopSettingsOf(s: Settings): LoopSettings {
  return {
    repeat: {
      explore: s.loopRepeatExplore,
      mutate: s.loopRepeatMutate,
      command: s.loopRepeatCommand,
    },
    windowCount: s.loopWindowCount,
    windowSize: s.loopWindowSize,
    cycles: s.loopCycles,
    noProgress: s.loopNoProgress,
    wobble: s.loopWobble,
  };
}
