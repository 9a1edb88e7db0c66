/**
 * The model-server options every command shares (`--provider`, `--model`, `--ollama-url`,
 * `--base-url`, `--api-key`), the settings they give, the server they resolve to with the
 * environment and the settings files beneath them, and the check of those files. One definition for
 * `keel run`, `keel analyze`, `keel models` and `keel doctor`.
 */
import { Option, type Command } from "commander";
import { ContextSchema } from "../agent/context.js";
import { AnalystContextSchema } from "../analysis/context.js";
import { fileSettings } from "../run/settings-file.js";
import {
  DEFAULT_BASE_URL,
  DEFAULT_OLLAMA_URL,
  ModelSettingsSchema,
  parseSettings,
  PROVIDERS,
  settingsFiles,
  type Provider,
} from "../run/settings.js";

export interface ServerFlags {
  provider?: Provider;
  model?: string;
  ollamaUrl?: string;
  baseUrl?: string;
  apiKey?: string;
}

/** Adds the server options to a command; `model` false for commands that take no model. */
export function addServerOptions(cmd: Command, model: string | false): Command {
  cmd.addOption(
    new Option(
      "--provider <name>",
      "the model server: ollama, or openai for an OpenAI-compatible /v1 server (llama.cpp, LM Studio, vLLM, MLX) (default: $KEEL_PROVIDER or ollama)",
    ).choices(PROVIDERS),
  );
  if (model) cmd.option("-m, --model <name>", model);
  return cmd
    .option("--ollama-url <url>", `Ollama server (default: $OLLAMA_HOST or ${DEFAULT_OLLAMA_URL})`)
    .option(
      "--base-url <url>",
      `provider openai: the server's /v1 root (default: $KEEL_BASE_URL or ${DEFAULT_BASE_URL})`,
    )
    .option(
      "--api-key <key>",
      "provider openai: API key, where the server wants one (default: $OPENAI_API_KEY)",
    );
}

/**
 * The settings the flags give, and nothing else: the environment, the settings files and the
 * defaults apply beneath them when the run's settings are parsed.
 */
export function serverSettings(flags: ServerFlags): ServerFlags {
  return Object.fromEntries(
    (["provider", "model", "ollamaUrl", "baseUrl", "apiKey"] as const)
      .filter((k) => flags[k] !== undefined)
      .map((k) => [k, flags[k]]),
  );
}

/** The server the flags, the environment and the settings files of `dir` name. */
export function resolvedServer(flags: ServerFlags, dir = ".") {
  checkSettingsFiles(dir);
  const s = parseSettings(ModelSettingsSchema, {
    context: { ...serverSettings(flags), workspace: dir },
  });
  return {
    provider: s.provider,
    url: s.serverUrl,
    model: s.model,
    ...(s.apiKey ? { apiKey: s.apiKey } : {}),
  };
}

/** Every setting a settings file may hold (the coder's and the analyst's). */
const KNOWN = new Set([
  ...Object.keys(ContextSchema.shape),
  ...Object.keys(AnalystContextSchema.shape),
]);

/**
 * Checks the settings files `dir`'s runs would read, with unknown fields refused (a typo would
 * otherwise be ignored). Throws `SettingsFileError` naming the file and the field.
 */
export function checkSettingsFiles(dir: string): void {
  const files = settingsFiles({ workspace: dir });
  fileSettings(ContextSchema, files, KNOWN);
  fileSettings(AnalystContextSchema, files, KNOWN);
}
