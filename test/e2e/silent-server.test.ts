/**
 * A port that accepts connections and never answers: the first contact with the server (the model
 * probe, the model listing) gives up within its deadline with exit 3 and names what got no reply.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { runKeel } from "../support/cli.js";
import { tempWorkspace } from "../support/harness.js";

/** A server that accepts every connection and writes nothing; closed when the test ends. */
async function silentServer(): Promise<string> {
  const sockets: Socket[] = [];
  const srv = createServer((s) => sockets.push(s));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  onTestFinished(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => srv.close(r));
  });
  return `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
}

/** A workspace, and a home whose user settings set `requestTimeoutMs` (a timeout is yours alone). */
function workspace(requestTimeoutMs: number) {
  const ws = tempWorkspace();
  const home = tempWorkspace("keel-home-");
  mkdirSync(path.join(home, ".config/keel"), { recursive: true });
  writeFileSync(
    path.join(home, ".config/keel/settings.json"),
    JSON.stringify({ requestTimeoutMs }),
  );
  return { ws, env: { HOME: home, XDG_CONFIG_HOME: "" } };
}

describe("a server that accepts connections and never answers", () => {
  it("ends keel run with exit 3 and 'no reply' within requestTimeoutMs (Ollama)", async () => {
    const url = await silentServer();
    const { ws, env } = workspace(1500);
    const started = Date.now();
    const r = await runKeel(["run", "Create z.py", "-w", ws, "--ollama-url", url, "--json"], {
      env,
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.code).toBe(3);
    expect(r.json?.error).toContain(`no reply from ${url}/api/show within 1.5 s`);
    expect(r.json?.turns).toBe(0);
  }, 30_000);

  it("ends keel run with exit 3 and 'no reply' within requestTimeoutMs (OpenAI-compatible)", async () => {
    const url = await silentServer();
    const { ws, env } = workspace(1500);
    const started = Date.now();
    const r = await runKeel(
      ["run", "Create z.py", "-w", ws, "--provider", "openai", "--base-url", `${url}/v1`],
      { env },
    );
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).toContain(`no reply from ${url}/v1/models within 1.5 s`);
  }, 30_000);

  it("ends keel models with exit 3 and 'no reply' instead of hanging", async () => {
    const url = await silentServer();
    const started = Date.now();
    const r = await runKeel(["models", "--ollama-url", url], {
      env: { HOME: tempWorkspace("keel-home-"), XDG_CONFIG_HOME: "" },
    });
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`no reply from ${url}/api/tags within 10 s`);
  }, 40_000);
});
