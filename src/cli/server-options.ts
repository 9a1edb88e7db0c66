/**
 * The model-server options every command shares (`--provider`, `--model`, `--ollama-url`,
 * `--base-url`, `--api-key`) and the settings they give, with the environment's defaults. One
 * definition for `keel run`, `keel analyze` and `keel models`.
 */
import { Option, type Command } from "commander";
import { readEnv } from "../env.js";
import {
  DEFAULT_BASE_URL,
  DEFAULT_MODEL,
  DEFAULT_OLLAMA_URL,
  PROVIDERS,
  type Provider,
} from "../run/settings.js";
import { UsageError } from "./session.js";

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

/** The run settings the flags and the environment give (flags first). */
export function serverSettings(flags: ServerFlags) {
  const env = readEnv();
  const provider = flags.provider ?? env.provider ?? "ollama";
  if (!(PROVIDERS as readonly string[]).includes(provider)) {
    throw new UsageError(
      `KEEL_PROVIDER=${provider} is not a provider; use ${PROVIDERS.join(" or ")}`,
    );
  }
  const baseUrl = flags.baseUrl ?? env.baseUrl;
  const apiKey = flags.apiKey ?? env.apiKey;
  return {
    provider: provider as Provider,
    model: flags.model ?? env.model ?? DEFAULT_MODEL,
    ollamaUrl: flags.ollamaUrl ?? env.ollamaHost ?? DEFAULT_OLLAMA_URL,
    ...(baseUrl ? { baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}

/** The URL of the server the settings name. */
export const serverUrlOf = (s: ReturnType<typeof serverSettings>): string =>
  s.provider === "openai" ? (s.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "") : s.ollamaUrl;
