/**
 * The one module that reads `process.env`. Everything else receives these values as arguments, so
 * graphs behave the same in the CLI, in tests and on the LangGraph server.
 */
import { homedir } from "node:os";
import path from "node:path";

export interface KeelEnv {
  /** `NO_COLOR` / `FORCE_COLOR` are honoured by picocolors itself; this only records CI. */
  ci: boolean;
  /** The environment commands run with: `PASSED_ENV`'s variables only (no API keys or tokens). */
  commandEnv: Record<string, string>;
  /** The user's settings file (`$XDG_CONFIG_HOME/keel/settings.json`, default under `~/.config`). */
  userSettingsFile: string;
  /** Real model servers and models (`npm run real-servers`), for the contract suite and the bench. */
  realServers: RealServerPaths;
  /**
   * Where a keel process notes the sandbox's stand-in folders of a command it runs, until the
   * command has finished (`stand-ins` in the state folder): the next command clears those of a keel
   * that was killed.
   */
  standInRecords: string;
  /**
   * keel's own state folder (`KEEL_STATE_DIR`, else `$XDG_STATE_HOME/keel`, default
   * `~/.local/state/keel`): what keel keeps for itself lives here, never in a workspace, which
   * anyone who ships a repository can fill.
   */
  stateDir: string;
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

/**
 * Environment variables a command inherits; every other one (API keys, tokens, keel's own
 * settings) stays out of the sandbox. `LC_*` passes as a prefix.
 */
export const PASSED_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ",
  "COLORTERM",
  "NO_COLOR",
  "PYENV_ROOT",
  "PYENV_VERSION",
  "NVM_DIR",
  "VOLTA_HOME",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "GOROOT",
  "GOPATH",
  "JAVA_HOME",
  "VIRTUAL_ENV",
  "CONDA_PREFIX",
  "PNPM_HOME",
];

/** The subset of an environment a command may see (`PASSED_ENV`). */
export function commandEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (PASSED_ENV.includes(k) || k.startsWith("LC_"))) out[k] = v;
  }
  return out;
}

/** The user's settings file for a home folder and `XDG_CONFIG_HOME`. */
export const userSettingsPath = (home: string, xdgConfigHome: string | undefined): string =>
  path.join(xdgConfigHome || path.join(home, ".config"), "keel", "settings.json");

/**
 * A PATH without its relative entries (`.`, `node_modules/.bin`, an empty entry): those resolve
 * against the working directory — often the workspace — so a program the agent left there under the
 * name `git`, `bash`, `bwrap` or `socat` would run outside the sandbox when keel starts one.
 */
export function absolutePath(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return value
    .split(path.delimiter)
    .filter((entry) => path.isAbsolute(entry))
    .join(path.delimiter);
}

// keel's own process (and every program it starts: git, bash, bubblewrap, socat, ripgrep) finds
// programs only in absolute folders, from the moment any module reads the environment.
if (process.env.PATH !== undefined) process.env.PATH = absolutePath(process.env.PATH);

/** Reads keel's environment variables once. */
export function readEnv(env: NodeJS.ProcessEnv = process.env): KeelEnv {
  return {
    ci: Boolean(env.CI),
    // The two that walk every variable, only when asked for: a run reads this object twice a turn
    // for the user's settings file (mcp/servers.ts); built eagerly they were 9% of the CPU time
    // of a 10-turn bench run.
    get commandEnv() {
      return commandEnv(env);
    },
    userSettingsFile: userSettingsPath(env.HOME || homedir(), env.XDG_CONFIG_HOME),
    get realServers() {
      return realServerPaths(env);
    },
    standInRecords: path.join(stateDirOf(env), "stand-ins"),
    stateDir: stateDirOf(env),
  };
}

/** keel's state folder: `KEEL_STATE_DIR`, else `$XDG_STATE_HOME/keel`, default `~/.local/state/keel`. */
const stateDirOf = (env: NodeJS.ProcessEnv) =>
  env.KEEL_STATE_DIR ||
  path.join(env.XDG_STATE_HOME || path.join(env.HOME || homedir(), ".local", "state"), "keel");

/** keel's cache folder: `KEEL_CACHE_DIR`, default `~/.cache/keel`. */
const cacheDirOf = (env: NodeJS.ProcessEnv) =>
  env.KEEL_CACHE_DIR || path.join(env.HOME || homedir(), ".cache", "keel");

/**
 * A run setting's environment variable (the settings table names which: `KEEL_MODEL`,
 * `OLLAMA_HOST`, …); undefined when unset or empty.
 */
export const variable = (name: string, env: NodeJS.ProcessEnv = process.env): string | undefined =>
  env[name] || undefined;

/** The real-server variables of `env` (see RealServerPaths). */
export function realServerPaths(env: NodeJS.ProcessEnv): RealServerPaths {
  const ggufs: Record<string, string> = {};
  for (const [key, value] of Object.entries(env))
    if (key.startsWith("KEEL_GGUF_") && value)
      ggufs[key.slice("KEEL_GGUF_".length).toLowerCase().replaceAll("_", "-")] = value;
  return {
    cacheDir: cacheDirOf(env),
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
