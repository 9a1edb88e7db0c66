/**
 * LangGraph Studio's side of keel: the real dev server (`langgraphjs dev --no-browser`) on a free
 * port serves the graphs from langgraph.json; the SDK's Client drives it the way Studio does,
 * against the fake Ollama server. The server's own settings (its environment and user settings
 * file) name the model server; a caller's origin and a run's context are tried as an attacker
 * would.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeOllama } from "../../src/testing/fake-ollama/index.js";
import {
  call,
  calls,
  keelScript,
  lastResult,
  startFakeOllama,
  tempWorkspace,
} from "../support/harness.js";

const root = path.resolve(import.meta.dirname, "../..");
let server: ChildProcess | undefined;
let client: Client;
let fake: FakeOllama;
let url = "";
let log = "";

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  fake = await startFakeOllama({
    script: keelScript((req) => {
      const text = req.userText;
      const escape = /escape check: ([^\n]+)/.exec(text)?.[1];
      if (escape)
        return req.turn === 0
          ? calls(call("run_command", { command: escape }))
          : { content: `Result: ${lastResult(req).slice(0, 200)}` };
      if (text.includes("approval")) {
        return req.turn === 0
          ? calls(call("run_command", { command: "kill -0 $$ && touch approved.txt" }))
          : { content: `Result: ${lastResult(req).slice(0, 30)}` };
      }
      return req.turn === 0
        ? calls(call("write_file", { path: "hello.txt", content: "hi from studio\n" }))
        : { content: "Created hello.txt." };
    }),
  });
  const port = await freePort();
  // the serving person's own settings: their environment and their user settings file
  const config = tempWorkspace("keel-studio-config-");
  mkdirSync(path.join(config, "keel"));
  writeFileSync(path.join(config, "keel/settings.json"), JSON.stringify({ retryBaseMs: 5 }));
  server = spawn(
    process.execPath,
    [
      path.join(root, "node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs"),
      "dev",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--no-browser",
    ],
    {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1", OLLAMA_HOST: fake.url, XDG_CONFIG_HOME: config },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  server.stdout!.on("data", (d: Buffer) => (log += d.toString()));
  server.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    const ok = await fetch(`${url}/ok`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (i === 119) throw new Error(`the LangGraph dev server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  client = new Client({ apiUrl: url });
}, 90_000);

afterAll(async () => {
  server?.kill("SIGTERM");
  await fake?.close();
});

const settings = (workspace: string, extra: Record<string, unknown> = {}) => ({
  workspace,
  ...extra,
});

describe("LangGraph dev server", () => {
  it("lists keel's assistants, draws the coder graph with its five nodes and serves its schemas", async () => {
    const assistants = await client.assistants.search({ limit: 20 });
    expect(assistants.map((a) => a.graph_id).sort()).toEqual(["analyst", "coder", "intent"]);
    const coder = assistants.find((a) => a.graph_id === "coder")!;
    const graph = (await client.assistants.getGraph(coder.assistant_id)) as {
      nodes: Array<{ id: string }>;
      edges: Array<{ source: string; target: string }>;
    };
    const ids = graph.nodes.map((n) => n.id);
    for (const node of ["intent-classify", "plan", "act", "tool-execute", "recover"])
      expect(ids).toContain(node);
    const edges = graph.edges.map((e) => `${e.source}>${e.target}`);
    for (const e of [
      "intent-classify>plan",
      "act>tool-execute",
      "tool-execute>act",
      "act>recover",
      "recover>plan",
      "recover>act",
    ])
      expect(edges).toContain(e);
    const schemas = (await client.assistants.getSchemas(coder.assistant_id)) as {
      input_schema?: { properties?: Record<string, unknown> };
      context_schema?: { properties?: Record<string, { description?: string }> };
    };
    expect(Object.keys(schemas.input_schema?.properties ?? {})).toContain("messages");
    // Studio's settings form: every run setting with its help text.
    for (const field of ["model", "ollamaUrl", "workspace", "maxTurns", "toolMode"]) {
      expect(schemas.context_schema?.properties?.[field]?.description, field).toBeTruthy();
    }
  });

  it("runs Studio's chat input to completion, streams updates, and keeps the history", async () => {
    const ws = tempWorkspace();
    const thread = await client.threads.create();
    const chunks: Array<{ event: string; data: unknown }> = [];
    for await (const chunk of client.runs.stream(thread.thread_id, "coder", {
      input: { messages: [{ role: "user", content: "Create hello.txt saying hi" }] },
      config: { configurable: settings(ws) },
      streamMode: "updates",
    }))
      chunks.push(chunk);
    const updated = chunks
      .filter((c) => c.event === "updates")
      .flatMap((c) => Object.keys(c.data as object));
    expect(updated).toEqual(
      expect.arrayContaining(["intent-classify", "plan", "act", "tool-execute"]),
    );
    expect(readFileSync(path.join(ws, "hello.txt"), "utf8")).toBe("hi from studio\n");
    const state = await client.threads.getState(thread.thread_id);
    expect((state.values as { status: string }).status).toBe("done");
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    expect(history.length).toBeGreaterThanOrEqual(6);
  });

  it("stops at an interrupt (approval) and resumes with a Command", async () => {
    const ws = tempWorkspace();
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "coder", {
      input: { messages: [{ role: "user", content: "Run the approval check" }] },
      config: { configurable: settings(ws, { interactive: true }) },
    });
    const paused = await client.threads.getState(thread.thread_id);
    expect(paused.next).toEqual(["tool-execute"]);
    const pending = paused.tasks.flatMap((t) => t.interrupts);
    expect(pending[0]?.value).toMatchObject({
      type: "approval",
      command: "kill -0 $$ && touch approved.txt",
    });
    expect(existsSync(path.join(ws, "approved.txt"))).toBe(false);
    await client.runs.wait(thread.thread_id, "coder", {
      command: { resume: "yes" },
      config: { configurable: settings(ws, { interactive: true }) },
    });
    const done = await client.threads.getState(thread.thread_id);
    expect((done.values as { status: string }).status).toBe("done");
    expect(existsSync(path.join(ws, "approved.txt"))).toBe(true);
  });
});

describe("who may use the server, and what a run's context may not decide", () => {
  const STUDIO = "https://smith.langchain.com";
  const EVIL = "http://evil.example";

  it("answers CORS for Studio's own origin only; a foreign origin's request is refused and runs nothing", async () => {
    const mine = await fetch(`${url}/ok`, { headers: { Origin: STUDIO } });
    expect(mine.status).toBe(200);
    expect(mine.headers.get("access-control-allow-origin")).toBe(STUDIO);

    const preflight = await fetch(`${url}/runs/wait`, {
      method: "OPTIONS",
      headers: {
        Origin: EVIL,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
      },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();

    // a page's "simple" request needs no preflight (the server reads text/plain as JSON): it
    // must not run either
    const ws = tempWorkspace();
    const res = await fetch(`${url}/runs/wait`, {
      method: "POST",
      headers: { Origin: EVIL, "Content-Type": "text/plain" },
      body: JSON.stringify({
        assistant_id: "coder",
        input: { messages: [{ role: "user", content: "Create hello.txt saying hi" }] },
        context: settings(ws),
      }),
    });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.status).toBe(403);
    expect(existsSync(path.join(ws, "hello.txt"))).toBe(false);

    // a page that points its own name at 127.0.0.1 (DNS rebinding) is same-origin with the
    // server, so CORS does not stop it from reading: its Host names it
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${url}/threads/search`,
        { method: "POST", headers: { Host: "evil.example", "Content-Type": "application/json" } },
        (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end("{}");
    });
    expect(rebound).toBe(403);
  });

  it("a run's context cannot run a command unsandboxed or approve it: the command never writes outside", async () => {
    const ws = tempWorkspace();
    const outside = tempWorkspace("keel-outside-");
    const target = path.join(outside, "escaped.txt");
    const res = await fetch(`${url}/runs/wait`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        assistant_id: "coder",
        input: { messages: [{ role: "user", content: `Run the escape check: touch ${target}` }] },
        context: settings(ws, {
          runCommandsUnsandboxed: true,
          autoApprove: true,
          approval: "auto",
          allowWrite: [outside],
          allowRules: ["run_command(touch*)"],
          maxTurns: 400,
        }),
      }),
    });
    const body = (await res.json()) as { __error__?: { message?: string } };
    expect(existsSync(target)).toBe(false);
    // the run says what it refused, naming each entry and who may set it
    const said = body.__error__?.message ?? JSON.stringify(body);
    expect(said).toMatch(/the run's context \(an API caller\): refused/);
    for (const key of ["runCommandsUnsandboxed", "autoApprove", "allowWrite", "allowRules"])
      expect(said).toContain(key);
    expect(said).toMatch(/only the person serving keel may set/);
    expect(said).toMatch(/maxTurns.*may only lower it \(yours: 40\)/);
  });
});
