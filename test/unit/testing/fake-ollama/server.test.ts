// The fake Ollama's fidelity, over HTTP and through ChatOllama (keel's fetch as the control): one file by design.
/**
 * The fake server must be faithful to Ollama (docs/ollama-protocol.md), or every other test proves
 * nothing. These tests speak raw HTTP to it, and drive the real ChatOllama through it.
 */
import { keptRaw } from "../../../../src/models/reply-facts.js";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { ChatOllama } from "@langchain/ollama";
import { describe, expect, it } from "vitest";
import { createOllamaFetch } from "../../../../src/models/ollama/fetch.js";
import type { FakeOllama } from "../../../../src/testing/fake-ollama/index.js";
import { call, fakeOllamaPerTest } from "../../../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest({ checkViolations: false });

const post = (path: string, body: unknown, raw = false) =>
  fetch(`${fake!.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: raw ? (body as string) : JSON.stringify(body),
  });

describe("HTTP surface", () => {
  it("answers health, version, tags, show and unknown routes like Ollama", async () => {
    fake = await startFake();
    expect(await (await fetch(`${fake.url}/`)).text()).toBe("Ollama is running");
    expect(await (await fetch(`${fake.url}/api/version`)).json()).toEqual({ version: "0.12.10" });
    const tags = (await (await fetch(`${fake.url}/api/tags`)).json()) as {
      models: Array<{ name: string }>;
    };
    expect(tags.models.map((m) => m.name)).toContain("qwen3:8b");
    const show = (await (await post("/api/show", { model: "gemma3:4b" })).json()) as {
      capabilities: string[];
    };
    expect(show.capabilities).toEqual(["completion", "vision"]);
    const missing = await post("/api/show", { model: "nope" });
    expect([missing.status, await missing.json()]).toEqual([
      404,
      { error: "model 'nope' not found" },
    ]);
    const unknown = await fetch(`${fake.url}/api/nothing`);
    expect([unknown.status, unknown.headers.get("content-type"), await unknown.text()]).toEqual([
      404,
      "text/plain",
      "404 page not found",
    ]);
  });

  it.each([
    ["", 400, "missing request body"],
    ["{x", 400, "invalid character 'x' looking for beginning of object key string"],
    [JSON.stringify({ messages: [] }), 400, "model is required"],
    [JSON.stringify({ model: "llama9" }), 404, "model 'llama9' not found"],
    [
      JSON.stringify({
        model: "gemma3:4b",
        tools: [{ type: "function", function: { name: "f" } }],
      }),
      400,
      "registry.ollama.ai/library/gemma3:4b does not support tools",
    ],
    [
      JSON.stringify({ model: "llama3.1:8b", think: true }),
      400,
      '"llama3.1:8b" does not support thinking',
    ],
    [
      JSON.stringify({ model: "nomic-embed-text" }),
      400,
      '"nomic-embed-text" does not support chat',
    ],
  ])("chat rejects %j with %i", async (body, status, error) => {
    fake = await startFake();
    const res = await post("/api/chat", body, true);
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toEqual({ error });
  });

  it("streams NDJSON with metrics only on the final line, and aggregates when stream is false", async () => {
    fake = await startFake({
      script: () => ({ content: "The sky is blue", toolCalls: [call("f", { a: 1 })] }),
    });
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object" } } }];
    const res = await post("/api/chat", {
      model: "llama3.1:8b",
      messages: [{ role: "user", content: "hi" }],
      tools,
    });
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = (await res.text())
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const final = lines.at(-1)!;
    expect(final).toMatchObject({
      done: true,
      done_reason: "stop",
      message: { role: "assistant", content: "" },
    });
    expect(final.eval_count).toBeGreaterThan(0);
    expect(lines.slice(0, -1).every((l) => l.done === false && !("eval_count" in l))).toBe(true);
    const callLine = lines.find((l) => (l.message as { tool_calls?: unknown }).tool_calls) as {
      message: { tool_calls: Array<{ id: string; function: object }> };
    };
    expect(callLine.message.tool_calls[0]!.id).toMatch(/^call_[a-z0-9]{8}$/);
    expect(callLine.message.tool_calls[0]!.function).toEqual({
      index: 0,
      name: "f",
      arguments: { a: 1 },
    });
    const whole = (await (
      await post("/api/chat", { model: "llama3.1:8b", messages: [], stream: false, tools })
    ).json()) as { message: { content: string; tool_calls: unknown[] }; done: boolean };
    expect(whole).toMatchObject({ done: true, message: { content: "The sky is blue" } });
    expect(whole.message.tool_calls).toHaveLength(1);
  });

  it("flags a script that calls a tool the request did not offer", async () => {
    fake = await startFake({ script: () => ({ toolCalls: [call("ghost")] }) });
    const res = await post("/api/chat", { model: "llama3.1:8b", messages: [] });
    expect(res.status).toBe(500);
    expect(fake.violations[0]).toContain('"ghost"');
  });
});

describe("ChatOllama through the fake", () => {
  const model = (url: string, repaired: boolean) =>
    new ChatOllama({
      model: "llama3.1:8b",
      baseUrl: url,
      ...(repaired ? { fetch: createOllamaFetch({ timeoutMs: 5000 }) } : {}),
    });

  it("reads content, usage, done_reason and tool calls (with fresh UUID ids)", async () => {
    fake = await startFake({
      script: () => ({ content: "ok", toolCalls: [call("get_weather", { city: "Paris" })] }),
    });
    const m = model(fake.url, true).bindTools([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "w",
          parameters: {
            type: "object",
            properties: { city: { type: "string" } },
            required: ["city"],
          },
        },
      },
    ]);
    const ai = (await m.invoke([new HumanMessage("weather?")])) as AIMessage;
    expect(ai.tool_calls?.[0]).toMatchObject({ name: "get_weather", args: { city: "Paris" } });
    expect(ai.tool_calls?.[0]?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ai.response_metadata.done_reason).toBe("stop");
    expect(ai.usage_metadata?.output_tokens).toBeGreaterThan(0);
  });

  it("negative control: plain ChatOllama sends tool results without tool_name / tool_call_id; keel's fetch adds them", async () => {
    fake = await startFake({ script: () => ({ content: "fine" }) });
    const history = [
      new HumanMessage("weather?"),
      new AIMessage({
        content: "",
        tool_calls: [{ id: "id-1", name: "get_weather", args: { city: "Paris" } }],
      }),
      new ToolMessage({ content: "sunny", tool_call_id: "id-1", name: "get_weather" }),
    ];
    await model(fake.url, false).invoke(history);
    await model(fake.url, true).invoke(history);
    const [plain, repaired] = fake
      .chatBodies()
      .map((b) => b.messages!.find((m) => m.role === "tool")!);
    expect(plain).toEqual({ role: "tool", content: "sunny" });
    expect(repaired).toEqual({
      role: "tool",
      content: "sunny",
      tool_name: "get_weather",
      tool_call_id: "id-1",
    });
  });

  it("negative control: string arguments are silently lost by plain ChatOllama, kept by keel's fetch", async () => {
    fake = await startFake({ script: () => ({ toolCalls: [call("f", '{"a":1}')] }) });
    const tools = [
      {
        type: "function" as const,
        function: { name: "f", description: "f", parameters: { type: "object", properties: {} } },
      },
    ];
    const plain = (await model(fake.url, false).bindTools(tools).invoke("go")) as AIMessage;
    const repaired = (await model(fake.url, true).bindTools(tools).invoke("go")) as AIMessage;
    expect(plain.tool_calls ?? []).toHaveLength(0);
    // kept with its text, for act's one repair pass to read (tools/call-repair.ts)
    expect(repaired.tool_calls?.[0]).toMatchObject({ name: "f", args: keptRaw('{"a":1}') });
  });

  it("surfaces a 503 as ResponseError with status_code, and makes exactly one request", async () => {
    fake = await startFake({
      script: () => ({
        fault: "status",
        status: 503,
        error: "server busy, please try again.  maximum pending requests exceeded",
      }),
    });
    const err = (await model(fake.url, true)
      .invoke("hi")
      .catch((e: unknown) => e)) as { name: string; status_code: number };
    expect(err).toMatchObject({ name: "ResponseError", status_code: 503 });
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it("surfaces a mid-stream error line as a plain Error with its text", async () => {
    fake = await startFake({
      script: () => ({ fault: "stream-error", error: "model runner has unexpectedly stopped" }),
    });
    await expect(model(fake.url, true).invoke("hi")).rejects.toThrow(
      "model runner has unexpectedly stopped",
    );
  });
});

describe("thinking with format and tools (ollama issue 10976)", () => {
  const request = (think?: boolean) => ({
    model: "qwen3:8b",
    stream: false,
    format: { type: "object", properties: { steps: { type: "array" } } },
    tools: [{ type: "function", function: { name: "read_file", parameters: { type: "object" } } }],
    messages: [{ role: "user", content: "plan" }],
    ...(think === undefined ? {} : { think }),
  });

  it("a thinking model answers nothing when thinking is on (also when `think` is absent), and JSON with think:false", async () => {
    fake = await startFake({ script: () => ({ content: '{"steps": ["read"]}' }) });
    for (const think of [undefined, true]) {
      const body = (await (await post("/api/chat", request(think))).json()) as {
        message: { content: string };
      };
      expect(body.message.content).toBe("");
    }
    const off = (await (await post("/api/chat", request(false))).json()) as {
      message: { content: string };
    };
    expect(off.message.content).toBe('{"steps": ["read"]}');
  });
});
