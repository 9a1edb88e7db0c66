/**
 * Starting the real model servers the project's installer provides (`KEEL_LLAMA_SERVER`,
 * `KEEL_OLLAMA`, `KEEL_GGUF_<NAME>`; read by src/env.ts) on a port the OS picks, for the real bench
 * and the real end-to-end tests. Each server's log is kept (Ollama's runner log is where the cache
 * reuse of a request is written).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { readEnv, readRealServers } from "../env.js";

export const REAL = readRealServers();

export interface RunningServer {
  /** The server's root, e.g. http://127.0.0.1:41234. */
  url: string;
  /** Everything the server wrote so far. */
  log(): string;
  close(): Promise<void>;
}

/** Waits until `pattern` appears in the child's output; its first group is the port. */
function listen(child: ChildProcess, pattern: RegExp, what: string, timeoutMs: number) {
  let out = "";
  const port = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${what} did not start in ${timeoutMs} ms:\n${out.slice(-2000)}`)),
      timeoutMs,
    );
    const seen = (chunk: Buffer) => {
      out += chunk.toString();
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout?.on("data", seen);
    child.stderr?.on("data", seen);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}):\n${out.slice(-2000)}`));
    });
  });
  return { port, log: () => out };
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 5000).unref();
  });

/**
 * llama-server on `model` with `args` (e.g. `["-c", "32768"]`), on a port the OS picks; resolves
 * once `/health` answers 200 (the model is loaded).
 */
export async function startLlamaServer(
  model: string,
  args: string[] = [],
  bin = REAL.llamaServer,
): Promise<RunningServer> {
  if (!bin) throw new Error("KEEL_LLAMA_SERVER is not set (run the real-server installer)");
  const child = spawn(bin, ["-m", model, "--host", "127.0.0.1", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: readEnv().commandEnv,
  });
  const l = listen(child, /listening on http:\/\/127\.0\.0\.1:(\d+)/, "llama-server", 120_000);
  try {
    const url = `http://127.0.0.1:${await l.port}`;
    for (let i = 0; i < 600; i++) {
      const ok = await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return { url, log: l.log, close: () => stop(child) };
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`llama-server never became healthy:\n${l.log().slice(-2000)}`);
  } catch (err) {
    await stop(child);
    throw err;
  }
}

export interface RunningOllama extends RunningServer {
  /** Imports a GGUF file as `name` (a Modelfile with `FROM <file>` and any extra lines). */
  create(name: string, gguf: string, extra?: string): Promise<void>;
}

/** `ollama serve` with a fresh model folder, on a port the OS picks; debug logs on (cache reuse). */
export async function startOllama(bin = REAL.ollama): Promise<RunningOllama> {
  if (!bin) throw new Error("KEEL_OLLAMA is not set (run the real-server installer)");
  const home = mkdtempSync(path.join(tmpdir(), "keel-ollama-"));
  const env = {
    ...readEnv().commandEnv,
    HOME: home,
    OLLAMA_MODELS: path.join(home, "models"),
    OLLAMA_HOST: "127.0.0.1:0",
    OLLAMA_DEBUG: "1",
    OLLAMA_NOPRUNE: "1",
  };
  const child = spawn(bin, ["serve"], { stdio: ["ignore", "pipe", "pipe"], env });
  const l = listen(child, /Listening on 127\.0\.0\.1:(\d+)/, "ollama serve", 60_000);
  const port = await l.port.catch(async (err: unknown) => {
    await stop(child);
    throw err;
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    log: l.log,
    close: () => stop(child),
    create: async (name, gguf, extra = "") => {
      const file = path.join(home, `${name.replace(/\W/g, "_")}.Modelfile`);
      writeFileSync(file, `FROM ${gguf}\n${extra}`);
      await new Promise<void>((resolve, reject) => {
        const c = spawn(bin, ["create", name, "-f", file], {
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...env, OLLAMA_HOST: `127.0.0.1:${port}` },
        });
        let out = "";
        c.stdout.on("data", (d: Buffer) => (out += d.toString()));
        c.stderr.on("data", (d: Buffer) => (out += d.toString()));
        c.on("exit", (code) =>
          code === 0 ? resolve() : reject(new Error(`ollama create ${name}: ${out.slice(-1000)}`)),
        );
      });
    },
  };
}
