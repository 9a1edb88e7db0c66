/**
 * Real model servers for tests and benchmarks: finds what `npm run real-servers` installed and
 * starts `llama-server` or `ollama serve` on a port the OS picks, waiting until the model answers.
 * Each started server is a child process of the caller; `close()` ends it, `kill()` ends it at once
 * (SIGKILL, for a server that dies mid-stream).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { realServerPaths, type RealServerPaths } from "../env.js";

/**
 * The installed servers and models: the variables in `paths`, else the lines the installer wrote to
 * `<cache>/real-servers.env`; only files that exist.
 */
export function locateRealServers(paths: RealServerPaths): RealServerPaths {
  const file = path.join(paths.cacheDir, "real-servers.env");
  const fromFile: Record<string, string> = {};
  if (existsSync(file))
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const at = line.indexOf("=");
      if (at > 0) fromFile[line.slice(0, at)] = line.slice(at + 1);
    }
  const cached = realServerPaths({ ...fromFile, KEEL_CACHE_DIR: paths.cacheDir });
  const present = (p: string | undefined) => (p && existsSync(p) ? p : undefined);
  const ggufs: Record<string, string> = {};
  for (const [name, p] of Object.entries({ ...cached.ggufs, ...paths.ggufs }))
    if (present(p)) ggufs[name] = p;
  return {
    cacheDir: paths.cacheDir,
    llamaServer: present(paths.llamaServer ?? cached.llamaServer),
    ollama: present(paths.ollama ?? cached.ollama),
    ollamaModels: present(paths.ollamaModels ?? cached.ollamaModels),
    ggufs,
  };
}

/** A real server started by this process. */
export interface RealServer {
  /** The server's root, e.g. http://127.0.0.1:40123. */
  url: string;
  /** What the server printed so far. */
  log(): string;
  /** Ends the server at once, as a crash would (SIGKILL). */
  kill(): Promise<void>;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  close(): Promise<void>;
}

export interface LlamaServerOptions {
  binary: string;
  gguf: string;
  /** `-c`: the context (all slots together; each slot gets ctx / slots when -np is given). */
  ctx?: number;
  /** `-np`: slots; default: the server's own (4, sharing one KV cache). */
  slots?: number;
  apiKey?: string;
  /** Any other flags. */
  args?: string[];
  /** Milliseconds to wait for the model to load (default 60 s). */
  timeoutMs?: number;
}

/** Starts `llama-server` on 127.0.0.1, port chosen by the OS; resolves once `/health` says ok. */
export async function startLlamaServer(o: LlamaServerOptions): Promise<RealServer> {
  const args = ["-m", o.gguf, "--host", "127.0.0.1", "--port", "0", "-t", "2", "--no-webui"];
  if (o.ctx) args.push("-c", String(o.ctx));
  if (o.slots) args.push("-np", String(o.slots));
  if (o.apiKey) args.push("--api-key", o.apiKey);
  const child = spawn(o.binary, [...args, ...(o.args ?? [])], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = await listening(child, /listening on (http:\/\/[\d.]+:\d+)/, o.timeoutMs);
  const server = handle(child, url);
  await ready(`${url}/health`, o.apiKey, child, o.timeoutMs);
  return server;
}

export interface OllamaOptions {
  binary: string;
  /** OLLAMA_MODELS: where the imported models are. */
  models: string;
  /** Extra environment (OLLAMA_NUM_PARALLEL, OLLAMA_CONTEXT_LENGTH…). */
  env?: Record<string, string>;
  timeoutMs?: number;
}

/** Starts `ollama serve` on 127.0.0.1, port chosen by the OS; resolves once `/api/version` answers. */
export async function startOllama(o: OllamaOptions): Promise<RealServer> {
  const child = spawn(o.binary, ["serve"], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      // Ollama writes a key pair under $HOME/.ollama: a home of its own beside the models, so a
      // test never sees the user's home folder change.
      HOME: path.join(path.dirname(o.models), "ollama-home"),
      OLLAMA_HOST: "127.0.0.1:0",
      OLLAMA_MODELS: o.models,
      OLLAMA_NOPRUNE: "1",
      ...o.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: a kill ends the model runners it starts too.
    detached: true,
  });
  const at = await listening(child, /Listening on (127\.0\.0\.1:\d+)/, o.timeoutMs);
  const url = `http://${at}`;
  const server = handle(child, url);
  await ready(`${url}/api/version`, undefined, child, o.timeoutMs);
  return server;
}

const logs = new WeakMap<ChildProcess, string[]>();

function listening(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  const seen: string[] = [];
  logs.set(child, seen);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not start in ${timeoutMs} ms:\n${seen.join("").slice(-2000)}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      seen.push(String(chunk));
      const m = pattern.exec(seen.join(""));
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      const how = signal ? `was killed by ${signal}` : `exited (${code})`;
      reject(new Error(`server ${how} before listening:\n${seen.join("").slice(-2000)}`));
    });
  });
}

async function ready(
  url: string,
  apiKey: string | undefined,
  child: ChildProcess,
  timeoutMs = 60_000,
) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}) while loading`);
    const res = await fetch(url, {
      headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {},
    }).catch(() => undefined);
    if (res?.ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`${url} did not answer ok in ${timeoutMs} ms`);
}

function handle(child: ChildProcess, url: string): RealServer {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  const stop = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      // The whole group when the server leads one (ollama serve and its runners).
      try {
        process.kill(-child.pid!, signal);
      } catch {
        child.kill(signal);
      }
    }
    await exited;
  };
  return {
    url,
    log: () => (logs.get(child) ?? []).join(""),
    kill: () => stop("SIGKILL"),
    close: () => stop("SIGTERM"),
  };
}
