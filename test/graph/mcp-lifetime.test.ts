/**
 * MCP servers belong to the run that starts them (issue 28): `runAgent` closes every server it
 * started when it returns, when it throws and when it is aborted, and a program that calls it exits
 * by itself. The test server writes its pid; a pid that `kill(pid, 0)` no longer finds is gone.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runAgent } from "../../src/api.js";
import { call, calls, fakeOllamaPerTest, keelScript, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();
const SERVER = path.resolve(import.meta.dirname, "../support/mcp-server.mjs");
const ROOT = path.resolve(import.meta.dirname, "../..");

/** The run settings of one trusted stdio MCP server that records its pid in `pidFile`. */
const calc = (pidFile: string) => ({
  calc: { command: process.execPath, args: [SERVER], env: { MCP_PID_FILE: pidFile }, trust: true },
});

const pidsIn = (file: string) =>
  existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map(Number) : [];

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Waits (bounded) for the processes to be gone: a close signals them, the OS reaps them. */
async function gone(pids: number[]): Promise<boolean> {
  for (let i = 0; i < 100 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 50));
  return !pids.some(alive);
}

describe("MCP servers belong to the run", () => {
  it("runAgent returns: the server it started is gone", async () => {
    const ws = tempWorkspace();
    const pidFile = path.join(ws, "..", `${path.basename(ws)}.pids`);
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0 ? calls(call("add", { a: 2, b: 40 })) : { content: "2 + 40 is 42." },
      ),
    });
    const state = await runAgent("What is 2 + 40? Use the add tool.", {
      ollamaUrl: fake.url,
      workspace: ws,
      retryBaseMs: 5,
      mcpServers: calc(pidFile),
    });
    expect(state.trail.filter((t) => t.name === "add" && t.ok)).toHaveLength(1);
    const pids = pidsIn(pidFile);
    expect(pids).toHaveLength(1);
    expect(await gone(pids)).toBe(true);
  });

  it("runAgent throws (the model server fails for good): the server is gone", async () => {
    const ws = tempWorkspace();
    const pidFile = path.join(ws, "..", `${path.basename(ws)}.pids`);
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("add", { a: 1, b: 1 }))
          : { fault: "status", status: 500, error: "runner crashed" },
      ),
    });
    await expect(
      runAgent("Add 1 and 1 with the add tool.", {
        ollamaUrl: fake.url,
        workspace: ws,
        retries: 0,
        retryBaseMs: 5,
        mcpServers: calc(pidFile),
      }),
    ).rejects.toThrow(/runner crashed/);
    const pids = pidsIn(pidFile);
    expect(pids).toHaveLength(1);
    expect(await gone(pids)).toBe(true);
  });

  it("runAgent is aborted mid-request: the server is gone", async () => {
    const ws = tempWorkspace();
    const pidFile = path.join(ws, "..", `${path.basename(ws)}.pids`);
    const abort = new AbortController();
    const fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0) return calls(call("add", { a: 3, b: 4 }));
        // The second turn hangs until the caller gives up.
        abort.abort();
        return { content: "never seen", delayMs: 10_000 };
      }),
    });
    await expect(
      runAgent("Add 3 and 4 with the add tool.", {
        ollamaUrl: fake.url,
        workspace: ws,
        retryBaseMs: 5,
        mcpServers: calc(pidFile),
        signal: abort.signal,
      }),
    ).rejects.toThrow();
    const pids = pidsIn(pidFile);
    expect(pids).toHaveLength(1);
    expect(await gone(pids)).toBe(true);
  });

  it("a program that calls runAgent with an MCP server exits by itself", async () => {
    const ws = tempWorkspace();
    const pidFile = path.join(ws, "..", `${path.basename(ws)}.pids`);
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0 ? calls(call("add", { a: 5, b: 5 })) : { content: "10." },
      ),
    });
    const program = path.join(ws, "..", `${path.basename(ws)}-program.mts`);
    writeFileSync(
      program,
      `import { runAgent } from ${JSON.stringify(path.join(ROOT, "src/api.ts"))};
const state = await runAgent("Add 5 and 5 with the add tool.", {
  ollamaUrl: ${JSON.stringify(fake.url)},
  workspace: ${JSON.stringify(ws)},
  retryBaseMs: 5,
  mcpServers: ${JSON.stringify(calc(pidFile))},
});
console.log(state.status);
`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", program], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += String(d)));
    child.stderr.on("data", (d: Buffer) => (out += String(d)));
    // A process kept alive by a server it started never exits: bounded here, then killed.
    const code = await new Promise<number | string>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve("did not exit within 60 s");
      }, 60_000);
      child.on("exit", (c) => {
        clearTimeout(timer);
        resolve(c ?? "killed");
      });
    });
    expect(code, out).toBe(0);
    expect(out.trim()).toMatch(/^(done|gave_up)$/m);
    expect(await gone(pidsIn(pidFile))).toBe(true);
  }, 90_000);
});
