/**
 * A multi-slot llama-server: discovery reads the slot's context (the request's real window) from
 * `/props` and `/slots`; no request names a slot (`id_slot`): left to the server, each thread's
 * request finds its prefix in a slot or in the server's prompt cache.
 */
import type { TurnUsage } from "../../src/coder/turn-sums.js";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { runConfig } from "../../src/coder/context.js";
import { createCoderGraph } from "../../src/coder/graph.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { describeOpenAIModel } from "../../src/models/openai/probe.js";
import { startFakeOpenAI } from "../../src/testing/fake-openai/index.js";
import { call, calls, keelScript, tempWorkspace } from "../support/harness.js";

const MODEL = "qwen2.5-coder-7b-instruct";
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** A server that answers discovery with these bodies (by path), as a real one would. */
function discovery(bodies: Record<string, unknown>): typeof fetch {
  return (input) => {
    const url = new URL(typeof input === "string" ? input : (input as URL).toString());
    const body = bodies[url.pathname];
    return Promise.resolve(
      body === undefined ? new Response("File Not Found", { status: 404 }) : Response.json(body),
    );
  };
}

const models = { object: "list", data: [{ id: MODEL, object: "model", owned_by: "llamacpp" }] };

describe("discovery of slots", () => {
  it("four slots splitting -c 4096: the window is 1024", async () => {
    const fetchImpl = discovery({
      "/v1/models": models,
      "/props": { n_ctx: 4096, total_slots: 4, chat_template: "{{ messages }}" },
    });
    const p = await describeOpenAIModel(fetchImpl, "http://h/v1", MODEL, undefined);
    expect(p).toMatchObject({ server: "llama.cpp", contextLength: 1024 });
  });

  it("/slots, where it is on, gives each slot's context", async () => {
    const fetchImpl = discovery({
      "/v1/models": models,
      "/props": {
        default_generation_settings: { n_ctx: 8192 },
        total_slots: 2,
        chat_template: "{{ messages }}",
      },
      "/slots": [
        { id: 0, n_ctx: 2048 },
        { id: 1, n_ctx: 2048 },
      ],
    });
    const p = await describeOpenAIModel(fetchImpl, "http://h/v1", MODEL, undefined);
    expect(p).toMatchObject({ contextLength: 2048 });
  });

  it("one slot: the whole context", async () => {
    const fetchImpl = discovery({
      "/v1/models": models,
      "/props": { default_generation_settings: { n_ctx: 8192 }, total_slots: 1, chat_template: "" },
    });
    const p = await describeOpenAIModel(fetchImpl, "http://h/v1", MODEL, undefined);
    expect(p.contextLength).toBe(8192);
  });
});

describe("the model's name", () => {
  const props = { default_generation_settings: { n_ctx: 8192 }, total_slots: 1, chat_template: "" };

  it("a llama-server serving one model takes any name, as the server does", async () => {
    const fetchImpl = discovery({ "/v1/models": models, "/props": props });
    const p = await describeOpenAIModel(fetchImpl, "http://h/v1", "qwen3:8b", undefined);
    expect(p).toMatchObject({ model: MODEL, server: "llama.cpp", contextLength: 8192 });
  });

  it("a server with several models, or one that reads the name, refuses a name it lacks", async () => {
    const two = { object: "list", data: [...models.data, { id: "other.gguf", object: "model" }] };
    await expect(
      describeOpenAIModel(
        discovery({ "/v1/models": two, "/props": props }),
        "http://h/v1",
        "qwen3:8b",
        undefined,
      ),
    ).rejects.toThrow(/model "qwen3:8b" not found; the server lists: .*other\.gguf/);
    const vllm = {
      object: "list",
      data: [{ id: "Qwen/Qwen3-8B", object: "model", owned_by: "vllm", max_model_len: 8192 }],
    };
    await expect(
      describeOpenAIModel(discovery({ "/v1/models": vllm }), "http://h/v1", "qwen3:8b", undefined),
    ).rejects.toThrow(/not found/);
  });
});

describe("no request names a slot", () => {
  const script = keelScript((req) =>
    req.turn < 2
      ? calls(call("write_file", { path: `f${req.turn}.txt`, content: "x\n" }))
      : { content: "Done." },
  );

  it("two threads taking turns on a 4-slot server: no id_slot; each finds its prefix in the server's cache", async () => {
    // The fake, like llama-server by default, has 4 slots sharing one KV cache and a prompt cache
    // in RAM (test/contract/slots.test.ts holds it to the real server).
    const f = await startFakeOpenAI({ server: "llama.cpp", script });
    closers.push(() => f.close());
    const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
    const run = (thread: string, request: string) =>
      graph.invoke(
        { messages: [new HumanMessage(request)] },
        runConfig(thread, {
          provider: "openai",
          baseUrl: f.baseUrl,
          model: MODEL,
          workspace: tempWorkspace(),
          retryBaseMs: 5,
        }),
      ) as Promise<CoderStateValue>;
    const [one, two] = await Promise.all([
      run("thread-one", "Create f0.txt and f1.txt in this folder, one at a time"),
      run("thread-two", "Please write f0.txt, then f1.txt (second set)"),
    ]);
    expect([one.status, two.status]).toEqual(["done", "done"]);
    const sent = f.chatBodies({ turnsOnly: true }) as unknown as Array<Record<string, unknown>>;
    expect(sent.length).toBe(6);
    for (const b of sent) expect(b).not.toHaveProperty("id_slot");
    // every turn after a thread's first is served from the server's cache, by its own count
    for (const state of [one, two]) {
      const usage = state.messages
        .filter((m) => AIMessage.isInstance(m))
        .map((m) => (m.response_metadata as { keel_usage?: TurnUsage }).keel_usage!)
        .filter(Boolean);
      expect(usage.length).toBe(3);
      for (const u of usage.slice(1)) expect(u.reusedTokens).toBeGreaterThan(u.promptTokens * 0.8);
    }
  });
});
