import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { onTestFinished } from "vitest";

export const KEEL_BIN = path.resolve(import.meta.dirname, "../../dist/cli/main.js");

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The JSON object on the last stdout line, when there is one. */
  json?: Record<string, unknown>;
}

/** A port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** Runs the built keel command; `onSpawn` gets the child (e.g. to kill it); `input` is its stdin. */
export function runKeel(
  args: string[],
  opts: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    onSpawn?: (c: ChildProcess) => void;
    input?: string;
  } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...opts.env };
    delete env.OLLAMA_HOST;
    delete env.KEEL_MODEL;
    env.NO_COLOR = "1";
    Object.assign(env, opts.env);
    const child = spawn(process.execPath, [KEEL_BIN, ...args], {
      cwd: opts.cwd,
      env,
      stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (opts.input !== undefined) child.stdin!.end(opts.input);
    // A test that fails or times out does not leave its keel running (and loading the machine for
    // the tests after it). Outside a test (a hook), the hook's own timeout applies.
    try {
      onTestFinished(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      });
    } catch {
      // not inside a test
    }
    opts.onSpawn?.(child);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const last = stdout.trim().split("\n").at(-1) ?? "";
      let json: Record<string, unknown> | undefined;
      try {
        json = JSON.parse(last) as Record<string, unknown>;
      } catch {
        json = undefined;
      }
      resolve({ code, signal, stdout, stderr, json });
    });
  });
}

/**
 * A `runKeel` `onSpawn` that does `act` to the running keel once `file` exists (the step a test
 * waits for has begun), polling every 20 ms until keel ends.
 */
export function whenExists(file: string, act: (child: ChildProcess) => void) {
  return (child: ChildProcess) => {
    const poll = setInterval(() => {
      if (!existsSync(file)) return;
      clearInterval(poll);
      act(child);
    }, 20);
    child.on("close", () => clearInterval(poll));
  };
}
