/**
 * What every run of keel's graphs shares, the coder's and the analyst's: the model settings (a zod
 * schema with defaults, each field described for Studio), their defaults from the environment, and
 * parsing a run's settings once.
 */
import { z } from "zod";
import { normaliseOllamaHost } from "../env.js";
import { GenerationBudgetSchema } from "../models/budget.js";
import { THINK_SETTINGS } from "../models/capabilities.js";
import { PROVIDERS, type Provider } from "../models/provider.js";
import { UNREACHABLE_RETRIES } from "../models/retry.js";
import { layered } from "./layered.js";
import { setting, type SettingCommand, type SettingMeta } from "./setting-meta.js";

export const DEFAULT_MODEL = "qwen3:8b";
export const DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434";
/** llama.cpp's `llama-server` default address. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1";
export { PROVIDERS, type Provider } from "../models/provider.js";

/** The commands that reach a model server, and so take the server's flags. */
const SERVER_COMMANDS: readonly SettingCommand[] = ["run", "analyze", "models", "doctor", "eval"];
/** The commands that ask a model. */
const MODEL_COMMANDS: readonly SettingCommand[] = ["run", "analyze", "eval", "worker"];
/** Harmless: a project's file and an API caller may set it too (`TRUST`). */
export const ANYONE: SettingMeta = { trust: "anyone" };
/**
 * The person's alone: where their data, keys or trust go, or a guard loosened (`TRUST`). A
 * cloned repository's settings must not send your prompts and OPENAI_API_KEY elsewhere.
 */
export const PERSON: SettingMeta = { trust: "person" };

/** A server's address: an http(s) URL, refused at once rather than retried as a failed request. */
const serverUrl = (example: string) =>
  z.string().refine(
    (v) => {
      try {
        return /^https?:$/.test(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `expected an http:// or https:// URL, e.g. ${example}` },
  );

/** The model's name, described for a graph (the analyst's also takes "none"). */
export const modelSetting = (describe: string, flagHelp = "model as the server lists it") =>
  setting(
    z
      .string()
      .min(1, "expected a model name, not empty text")
      .default(DEFAULT_MODEL)
      .describe(describe),
    {
      flag: "-m, --model <name>",
      commands: ["run", "analyze", "eval", "doctor"],
      flagHelp,
      env: "KEEL_MODEL",
      example: "qwen2.5-coder:7b",
      ...ANYONE,
    },
  );

/** The model and how to reach it: the settings both graphs take. */
export const ModelSettingsSchema = z.object({
  provider: setting(
    z
      .enum(PROVIDERS)
      .default("ollama")
      .describe(
        "The model server: ollama (its native API) or openai (an OpenAI-compatible /v1 server: llama.cpp, LM Studio, vLLM, MLX)",
      ),
    { flag: "--provider <name>", commands: SERVER_COMMANDS, env: "KEEL_PROVIDER", ...PERSON },
  ),
  model: modelSetting("Model name as the server lists it, e.g. qwen3:8b"),
  baseUrl: setting(
    serverUrl("http://127.0.0.1:8080/v1")
      .optional()
      .describe(
        `provider openai: the server's /v1 root, e.g. http://127.0.0.1:1234/v1; unset means ${DEFAULT_BASE_URL}. Given for a run (--base-url) with no provider set anywhere, the provider is openai`,
      ),
    {
      flag: "--base-url <url>",
      commands: SERVER_COMMANDS,
      env: "KEEL_BASE_URL",
      example: "http://127.0.0.1:1234/v1",
      ...PERSON,
    },
  ),
  apiKey: setting(
    z.string().optional().describe("provider openai: the API key, where the server wants one"),
    {
      flag: "--api-key <key>",
      commands: [...SERVER_COMMANDS, "worker"],
      env: "OPENAI_API_KEY",
      example: "sk-1",
      secret: true,
      ...PERSON,
    },
  ),
  ollamaUrl: setting(
    serverUrl("http://127.0.0.1:11434")
      .optional()
      .describe(`Base URL of the Ollama server; unset means ${DEFAULT_OLLAMA_URL}`),
    {
      flag: "--ollama-url <url>",
      commands: SERVER_COMMANDS,
      env: "OLLAMA_HOST",
      fromEnv: normaliseOllamaHost,
      example: "http://127.0.0.1:11435",
      ...PERSON,
    },
  ),
  temperature: setting(
    z.number().min(0).max(2).default(0.2).describe("Sampling temperature for the model"),
    ANYONE,
  ),
  think: setting(
    z
      .enum(THINK_SETTINGS)
      .default("auto")
      .describe(
        "Thinking for models with the thinking capability: on, off, or a level (low|medium|high, for models that take levels such as gpt-oss; others think on). auto: the server's default (on). Structured requests never think",
      ),
    { flag: "--think <mode>", commands: ["run"], ...ANYONE },
  ),
  contextWindow: setting(
    z
      .number()
      .int()
      .min(1024)
      .default(16384)
      .describe(
        "Context window keel asks the server for (num_ctx), capped by the model's own; every request is kept under it",
      ),
    { flag: "--context-window <tokens>", commands: [...MODEL_COMMANDS, "doctor"], ...ANYONE },
  ),
  cacheReuse: setting(
    z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        "llama.cpp: the shortest run of its cached prompt the server may shift into place instead of evaluating (n_cache_reuse); keel then folds so the turns it keeps stay cached. 0: off. The shifted turns keep values computed while the folded turns were before them",
      ),
    { flag: "--cache-reuse <tokens>", commands: ["run", "eval"], example: 256, ...ANYONE },
  ),
  generationBudget: setting(
    GenerationBudgetSchema.describe(
      "Most tokens the model may generate per call, by kind (classify, plan, act, summary, analyze): sent as max_tokens (OpenAI-compatible) or num_predict (Ollama); a reply cut there is never run",
    ),
    // an output limit: a project's file must not let the model write until the window is full
    { example: { act: 2048 }, ...PERSON },
  ),
  retries: setting(
    z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(4)
      .describe(
        `Retries of a failed model request (503, dropped connection, timeout); a server that refuses the connection is retried at most ${UNREACHABLE_RETRIES} times`,
      ),
    { flag: "--retries <n>", commands: MODEL_COMMANDS, ...PERSON },
  ),
  retryBaseMs: setting(
    z.number().int().min(0).default(500).describe("First retry delay in ms; doubles each retry"),
    PERSON,
  ),
  requestTimeoutMs: setting(
    z
      .number()
      .int()
      .positive()
      .default(300_000)
      .describe("Most ms to wait for the model's first byte, and between streamed lines"),
    PERSON,
  ),
});

/** Where a node finds its run's settings. */
export interface SettingsSource {
  context?: unknown;
  configurable?: Record<string, unknown>;
}

/**
 * A run's settings under `schema`: the run's `context` (LangGraph ≥ 1) or, for older clients,
 * `configurable`, over the environment's defaults, over the settings files (settings-file.ts), over
 * the schema's defaults; `ollamaUrl` resolved from OLLAMA_HOST when unset, and
 * `serverUrl`: the URL of the run's model server (Ollama's, or the OpenAI-compatible `/v1` root).
 *
 * Every node asks for them, so they are parsed once per run: the result is kept with the run's
 * context object (and the configurable values it was parsed from) and returned frozen.
 */
export function parseSettings<S extends z.ZodObject>(
  schema: S,
  config?: SettingsSource,
): Readonly<z.output<S> & ServerSettings> {
  type Out = Readonly<z.output<S> & ServerSettings>;
  const context = config?.context;
  const configurable = config?.configurable ?? {};
  const run = typeof context === "object" && context !== null ? context : undefined;
  const inputs = Object.keys(schema.shape).map((k) => configurable[k]);
  const hit = run && parsed.get(run)?.get(schema);
  if (hit && hit.inputs.every((v, i) => v === inputs[i])) return hit.value as Out;
  const value = withServer(schema.parse(layered(schema, { ...configurable, ...run })));
  if (run) remember(run, schema, inputs, value);
  return value;
}

/**
 * A run's context object made from settings parsed already (`runConfig`, `analystRunConfig`): its
 * settings are kept with it as `parseSettings` keeps them, so the run's first node does not read
 * the settings files and parse them again, and a settings file the run's own agent breaks or
 * changes midway does not change the run.
 */
export function settingsContext<S extends z.ZodObject, C extends object>(
  schema: S,
  parsedSettings: z.output<S>,
  context: C,
): C {
  remember(
    context,
    schema,
    Object.keys(schema.shape).map(() => undefined),
    withServer(parsedSettings),
  );
  return context;
}

/**
 * The context of a run an API caller started (the LangGraph server's runs, graphs/served.ts): the
 * caller's settings layered as an untrusted source's (`layered`, caller "api") over the serving
 * process's own, parsed once and kept with the context as `settingsContext` keeps them. Throws
 * `SettingsFileError` naming each setting the caller may not set.
 */
export function callerContext<S extends z.ZodObject>(
  schema: S,
  given: Record<string, unknown>,
): z.output<S> {
  const parsedSettings = schema.parse(layered(schema, given, { caller: "api" }));
  return settingsContext(schema, parsedSettings, { ...parsedSettings });
}

/** Parsed settings with the server resolved (`ServerSettings`), frozen. */
function withServer<T>(s: T): Readonly<T & ServerSettings> {
  const {
    ollamaUrl: url,
    baseUrl: base,
    provider,
  } = s as {
    ollamaUrl?: string;
    baseUrl?: string;
    provider?: Provider;
  };
  const ollamaUrl = url ?? DEFAULT_OLLAMA_URL;
  const baseUrl = (base ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  return Object.freeze({
    ...s,
    ollamaUrl,
    serverUrl: provider === "openai" ? baseUrl : ollamaUrl,
  });
}

/** Keeps a run's parsed settings with its context object (`parsed`). */
function remember(run: object, schema: z.ZodObject, inputs: unknown[], value: unknown) {
  parsed.set(
    run,
    (parsed.get(run) ?? new Map<z.ZodObject, ParsedSettings>()).set(schema, { inputs, value }),
  );
}

/** What `parseSettings` resolves of the server. */
export interface ServerSettings {
  ollamaUrl: string;
  /** The model server's URL: `ollamaUrl`, or for provider openai the `/v1` root. */
  serverUrl: string;
}

interface ParsedSettings {
  inputs: unknown[];
  value: unknown;
}
const parsed = new WeakMap<object, Map<z.ZodObject, ParsedSettings>>();
