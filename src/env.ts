/**
 * The one module that reads `process.env`. Everything else receives these values as arguments, so
 * graphs behave the same in the CLI, in tests and on the LangGraph server.
 */
import { homedir } from "node:os";
import path from "node:path";
import { userSettingsPath } from "./run/settings-file.js";
import { commandEnv } from "./sandbox/policy.js";

export interface KeelEnv {
  /** `OLLAMA_HOST`, normalised to a URL; undefined when unset. */
  ollamaHost: string | undefined;
  /** `KEEL_MODEL`: the default model name when none is configured. */
  model: string | undefined;
  /** `KEEL_PROVIDER`: `ollama` or `openai` (an OpenAI-compatible server). */
  provider: string | undefined;
  /** `KEEL_BASE_URL`: the OpenAI-compatible server's `/v1` root. */
  baseUrl: string | undefined;
  /** `OPENAI_API_KEY`: sent to an OpenAI-compatible server that wants one. */
  apiKey: string | undefined;
  /** `NO_COLOR` / `FORCE_COLOR` are honoured by picocolors itself; this only records CI. */
  ci: boolean;
  /** The environment commands run with: `PASSED_ENV`'s variables only (no API keys or tokens). */
  commandEnv: Record<string, string>;
  /** The user's settings file (`$XDG_CONFIG_HOME/keel/settings.json`, default under `~/.config`). */
  userSettingsFile: string;
  /** Real model servers and models (`npm run real-servers`), for the contract suite and the bench. */
  realServers: RealServerPaths;
}

/**
 * Where `npm run real-servers` put things: `KEEL_CACHE_DIR` (default `~/.cache/keel`), and the
 * variables it prints, `KEEL_LLAMA_SERVER`, `KEEL_OLLAMA`, `KEEL_OLLAMA_MODELS`, `KEEL_GGUF_<NAME>`
 * (name lower-cased, `_` as `-`). Unset ones are looked up in the cache's `real-servers.env`.
 */
export interface RealServerPaths {
  cacheDir: string;
  llamaServer: string | undefined;
  ollama: string | undefined;
  ollamaModels: string | undefined;
  ggufs: Record<string, string>;
}

/** Reads keel's environment variables once. */
export function readEnv(env: NodeJS.ProcessEnv = process.env): KeelEnv {
  return {
    ollamaHost: env.OLLAMA_HOST ? normaliseOllamaHost(env.OLLAMA_HOST) : undefined,
    model: env.KEEL_MODEL || undefined,
    provider: env.KEEL_PROVIDER || undefined,
    baseUrl: env.KEEL_BASE_URL || undefined,
    apiKey: env.OPENAI_API_KEY || undefined,
    ci: Boolean(env.CI),
    commandEnv: commandEnv(env),
    userSettingsFile: userSettingsPath(env.HOME || homedir(), env.XDG_CONFIG_HOME),
    realServers: realServerPaths(env),
  };
}

/** The real-server variables of `env` (see RealServerPaths). */
export function realServerPaths(env: NodeJS.ProcessEnv): RealServerPaths {
  const ggufs: Record<string, string> = {};
  for (const [key, value] of Object.entries(env))
    if (key.startsWith("KEEL_GGUF_") && value)
      ggufs[key.slice("KEEL_GGUF_".length).toLowerCase().replaceAll("_", "-")] = value;
  return {
    cacheDir: env.KEEL_CACHE_DIR || path.join(env.HOME || homedir(), ".cache", "keel"),
    llamaServer: env.KEEL_LLAMA_SERVER || undefined,
    ollama: env.KEEL_OLLAMA || undefined,
    ollamaModels: env.KEEL_OLLAMA_MODELS || undefined,
    ggufs,
  };
}

/**
 * `OLLAMA_HOST` is often written as `0.0.0.0:11434` or `localhost`: add the scheme and port the way
 * Ollama's own client does, and replace the wildcard address (it is a bind address, not a target).
 */
export function normaliseOllamaHost(host: string): string {
  let value = host.trim();
  if (!/^https?:\/\//i.test(value)) value = `http://${value}`;
  const url = new URL(value);
  if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1";
  if (!url.port && !/^https?:\/\/[^/]+:\d+/i.test(value)) {
    url.port = url.protocol === "https:" ? "443" : "11434";
  }
  return url.toString().replace(/\/$/, "");
}
