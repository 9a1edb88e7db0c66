/**
 * The OpenAI-compatible provider against the fake OpenAI-compatible server, as each server behaves:
 * discovery, native calls with ids, salvage of calls left in content or written as XML arguments,
 * each server's request quirks, its tool-channel errors answered by prompt mode, its context error
 * named with the fix, and the analyst on the same provider.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { HumanMessage } from "@langchain/core/messages";
import { runAnalysis } from "../../src/api.js";
import { createCoderGraph } from "../../src/coder/graph.js";
import { runAgent } from "../../src/api.js";
import { runConfig, type SettingsInput } from "../../src/coder/context.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { readTallies } from "../../src/coder/learning/ledger.js";
import { runRecord } from "../../src/coder/learning/run-record.js";
import { ModelServerError } from "../../src/models/errors.js";
import type { ServerKind } from "../../src/models/openai/quirks.js";
import {
  DEFAULT_MLX_MODELS,
  DEFAULT_OPENAI_MODELS,
  startFakeOpenAI,
  type FakeOpenAI,
  type FakeOpenAIOptions,
} from "../../src/testing/fake-openai/index.js";
import { analystScript } from "../../src/testing/script.js";
import { call, calls, keelScript, tempWorkspace } from "../support/harness.js";

const MODEL = "qwen2.5-coder-7b-instruct";
let started: FakeOpenAI[] = [];
afterEach(async () => {
  const servers = started;
  started = [];
  await Promise.all(servers.map((s) => s.close()));
  for (const s of servers) expect(s.violations).toEqual([]);
});
async function fake(opts: FakeOpenAIOptions): Promise<FakeOpenAI> {
  const f = await startFakeOpenAI(opts);
  started.push(f);
  return f;
}

let counter = 0;
async function run(f: FakeOpenAI, request: string, context: Partial<SettingsInput> = {}) {
  const ws = tempWorkspace();
  const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
  const config = runConfig(`oai-${++counter}`, {
    provider: "openai",
    baseUrl: f.baseUrl,
    model: MODEL,
    workspace: ws,
    retryBaseMs: 5,
    ...context,
  });
  const state = (await graph.invoke(
    { messages: [new HumanMessage(request)] },
    config,
  )) as CoderStateValue;
  return { state, ws };
}

const writeHello = keelScript((req) =>
  req.turn === 0
    ? calls(call("write_file", { path: "hello.py", content: "print('hi')\n" }))
    : { content: "Wrote hello.py." },
);

describe("native tool calls on each server", () => {
  it.each<[ServerKind, { usage: boolean; serial: boolean }]>([
    ["llama.cpp", { usage: true, serial: false }],
    ["lmstudio", { usage: true, serial: true }],
    ["vllm", { usage: true, serial: false }],
    ["mlx", { usage: false, serial: true }],
    ["generic", { usage: false, serial: false }],
  ])(
    "%s: builds the file; the answer carries the call's id; the server's quirks on the wire",
    async (server, q) => {
      const f = await fake({ server, script: writeHello });
      const model = server === "mlx" ? Object.keys(DEFAULT_MLX_MODELS)[0]! : MODEL;
      const { state, ws } = await run(f, "Create hello.py that prints hi", { model });
      expect(state.status).toBe("done");
      expect(readFileSync(path.join(ws, "hello.py"), "utf8")).toBe("print('hi')\n");
      const turns = f.chatBodies({ turnsOnly: true });
      const second = turns[1]!;
      const assistant = second.messages.find((m) => m.role === "assistant")!;
      const tool = second.messages.find((m) => m.role === "tool")!;
      expect(tool.tool_call_id).toBe(assistant.tool_calls![0]!.id);
      expect(turns[0]!.tools?.map((t) => t.function.name)).toContain("write_file");
      // Usage in the stream only where the server takes stream_options (the fake refuses it elsewhere).
      const streamed = turns.filter((b) => b.stream);
      for (const b of streamed) expect(Boolean(b.stream_options)).toBe(q.usage);
      for (const b of turns.filter((t) => t.tools?.length))
        expect(b.parallel_tool_calls).toBe(q.serial ? false : undefined);
    },
  );

  it("a llama-server answers to any name: the run is recorded under the name it serves, not keel's default", async () => {
    const served = "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
    const f = await fake({
      server: "llama.cpp",
      models: { [served]: DEFAULT_OPENAI_MODELS[MODEL]! },
      script: writeHello,
    });
    const store = new InMemoryStore();
    // runAgent, as the CLI, leaves the finished run's tally in the store's ledger
    const state = await runAgent("Create hello.py that prints hi", {
      threadId: "served-name",
      store,
      provider: "openai",
      baseUrl: f.baseUrl,
      workspace: tempWorkspace(),
      retryBaseMs: 5,
      learnDescriptions: true,
    });
    expect(state.status).toBe("done");
    // the request went out under keel's default name, which the server ignored
    expect(f.chatBodies({ turnsOnly: true })[0]!.model).toBe("qwen3:8b");
    expect(runRecord("served-name", "now", state)?.model).toBe(served);
    expect(state.fit?.model).toBe(served);
    expect(await readTallies(store, served)).toHaveLength(1);
    expect(await readTallies(store, "qwen3:8b")).toHaveLength(0);
  });

  it("parallel calls keep their order and ids", async () => {
    const f = await fake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(
              call("write_file", { path: "a.txt", content: "A" }),
              call("write_file", { path: "b.txt", content: "B" }),
            )
          : { content: "Both written." },
      ),
    });
    const { state, ws } = await run(f, "Create a.txt and b.txt");
    expect(existsSync(path.join(ws, "a.txt")) && existsSync(path.join(ws, "b.txt"))).toBe(true);
    expect(state.trail.map((t) => t.target)).toEqual(["a.txt", "b.txt"]);
    const second = f.chatBodies({ turnsOnly: true })[1]!;
    const ids = second.messages.find((m) => m.role === "assistant")!.tool_calls!.map((c) => c.id);
    const answered = second.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
    expect(answered).toEqual(ids);
  });

  it("sends each tool-call turn's reasoning_content back with it (ChatOpenAI drops it)", async () => {
    const f = await fake({
      server: "llama.cpp",
      script: keelScript((req) =>
        req.turn === 0
          ? {
              thinking: "The user wants hello.py; write it.",
              ...calls(call("write_file", { path: "hello.py", content: "print('hi')\n" })),
            }
          : { content: "Wrote hello.py." },
      ),
    });
    const { state } = await run(f, "Create hello.py that prints hi");
    expect(state.status).toBe("done");
    const second = f.chatBodies({ turnsOnly: true })[1]!;
    const assistant = second.messages.find((m) => m.role === "assistant")!;
    expect(assistant.reasoning_content).toBe("The user wants hello.py; write it.");
  });

  it("reads the server's usage: prompt tokens per turn", async () => {
    const f = await fake({ server: "vllm", script: writeHello });
    const { state } = await run(f, "Create hello.py that prints hi");
    const usage = state.messages
      .map((m) => (m.response_metadata as { keel_usage?: { promptTokens: number } }).keel_usage)
      .filter(Boolean);
    expect(usage.length).toBe(2);
    expect(usage[0]!.promptTokens).toBeGreaterThan(100);
  });
});

describe("salvage of what servers get wrong", () => {
  it("a call left in content with empty tool_calls (vLLM, LM Studio) is read and run", async () => {
    const f = await fake({
      server: "vllm",
      script: keelScript((req) =>
        req.turn === 0
          ? {
              content:
                "<tool_call>\n<function=write_file>\n<parameter=path>\nnotes.md\n</parameter>\n<parameter=content>\n# Notes\n</parameter>\n</function>\n</tool_call>",
            }
          : { content: "Created notes.md." },
      ),
    });
    const { state, ws } = await run(f, "Create notes.md with a heading");
    expect(readFileSync(path.join(ws, "notes.md"), "utf8")).toBe("# Notes");
    expect(state.status).toBe("done");
  });

  it("XML inside function.arguments is read with keel's parsers", async () => {
    const f = await fake({
      server: "lmstudio",
      script: keelScript((req) =>
        req.turn === 0
          ? calls(
              call(
                "write_file",
                "<parameter=path>\nsrc/app.js\n</parameter>\n<parameter=content>\nconsole.log(1);\n</parameter>",
              ),
            )
          : { content: "Created src/app.js." },
      ),
    });
    const { ws } = await run(f, "Create src/app.js that logs 1");
    expect(readFileSync(path.join(ws, "src/app.js"), "utf8")).toBe("console.log(1);");
  });
});

describe("each server's tool-channel errors", () => {
  const writeEither = keelScript((req) => {
    // In prompt mode results come back as user messages, so look for the result's words.
    const done = req.messages.some(
      (m) => m.role !== "system" && /created hello\.py/.test(m.content),
    );
    if (done) return { content: "Wrote hello.py." };
    // Prompt mode: the call as text in the model's format.
    return req.toolNames.length
      ? calls(call("write_file", { path: "hello.py", content: "print('hi')\n" }))
      : {
          content:
            '<tool_call>\n{"name": "write_file", "arguments": {"path": "hello.py", "content": "print(\'hi\')\\n"}}\n</tool_call>',
        };
  });

  it.each<[string, FakeOpenAIOptions]>([
    ["llama.cpp without --jinja", { server: "llama.cpp", requireJinja: true }],
    ["vLLM without --enable-auto-tool-choice", { server: "vllm", noAutoToolChoice: true }],
  ])("%s: the run continues with tools in the prompt", async (_, opts) => {
    const f = await fake({ ...opts, script: writeEither });
    const { state, ws } = await run(f, "Create hello.py that prints hi");
    expect(state.status, JSON.stringify([state.trail, state.summary])).toBe("done");
    expect(existsSync(path.join(ws, "hello.py"))).toBe(true);
    const last = f.chatBodies({ turnsOnly: true }).at(-1)!;
    expect(last.tools).toBeUndefined();
    expect(last.messages[0]!.content).toMatch(/write_file/);
  });

  it("a prompt over the server's context stops with the server's words and the fix", async () => {
    // The server counts far more tokens than keel estimates (0.3 characters a token): keel's own
    // prompt is over the server's context however it refits.
    const f = await fake({
      server: "llama.cpp",
      // 4 slots of 3,000 tokens: keel's own prompt fits a slot by keel's estimate, not the server's count
      models: { [MODEL]: { contextLength: 12000, tools: true, charsPerToken: 0.3 } },
      script: writeHello,
    });
    writeFileSync(path.join(tempWorkspace(), "x"), "");
    const err = await run(f, "Create hello.py that prints hi").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelServerError);
    expect((err as ModelServerError).kind).toBe("truncated");
    expect((err as Error).message).toMatch(
      /OpenAI-compatible server.*exceeds the available context size.*llama-server -c/s,
    );
    expect((err as Error).message).not.toMatch(/lower --context-window/);
  });

  it("an API key is sent to discovery and chat; a wrong one is named", async () => {
    const f = await fake({ apiKey: "sk-local", script: writeHello });
    const { state } = await run(f, "Create hello.py that prints hi", { apiKey: "sk-local" });
    expect(state.status).toBe("done");
    expect(f.requests.every((r) => r.headers.authorization === "Bearer sk-local")).toBe(true);
    const err = await run(f, "Create hello.py", { apiKey: "wrong" }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/OpenAI-compatible server.*Invalid API Key/);
  });
});

describe("the analyst on the provider", () => {
  it("analyses a folder with the model", async () => {
    const f = await fake({
      server: "llama.cpp",
      script: analystScript(),
    });
    const dir = tempWorkspace();
    writeFileSync(path.join(dir, "a.js"), "export const a = 1;\n");
    const out = await runAnalysis(dir, {
      provider: "openai",
      baseUrl: f.baseUrl,
      model: MODEL,
      retryBaseMs: 5,
    });
    expect(out.report.model).toBe(MODEL);
    expect(f.chatBodies().length).toBeGreaterThan(0);
  });
});
