/**
 * A multi-slot llama-server: discovery reads the slot's context (the request's real window) from
 * `/props` and `/slots`, and a thread's requests ask for one slot (`id_slot`, `cache_prompt`), the
 * same every turn, so its prefix stays cached there.
 */
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { runConfig } from "../../src/agent/context.js";
import { createCoderGraph } from "../../src/agent/graph.js";
import type { CoderStateValue } from "../../src/agent/state.js";
import type { ModelProfile } from "../../src/models/capabilities.js";
import { describeOpenAIModel } from "../../src/models/openai/probe.js";
import { slotFor } from "../../src/models/openai/slots.js";
import { startFakeOpenAI, type FakeOpenAI } from "../../src/testing/fake-openai/index.js";
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
    expect(p).toMatchObject({ server: "llama.cpp", contextLength: 1024, slots: 4 });
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
    expect(p).toMatchObject({ contextLength: 2048, slots: 2 });
  });

  it("one slot: no slot count, the whole context", async () => {
    const fetchImpl = discovery({
      "/v1/models": models,
      "/props": { default_generation_settings: { n_ctx: 8192 }, total_slots: 1, chat_template: "" },
    });
    const p = await describeOpenAIModel(fetchImpl, "http://h/v1", MODEL, undefined);
    expect(p.contextLength).toBe(8192);
    expect(p.slots).toBeUndefined();
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

describe("one thread, one slot", () => {
  const script = keelScript((req) =>
    req.turn < 2
      ? calls(call("write_file", { path: `f${req.turn}.txt`, content: "x\n" }))
      : { content: "Done." },
  );

  async function runThread(f: FakeOpenAI, thread: string, slots: number | undefined) {
    const profile: ModelProfile = {
      model: MODEL,
      capabilities: ["completion", "tools"],
      format: "hermes",
      server: "llama.cpp",
      contextLength: 32768,
      ...(slots ? { slots } : {}),
    };
    const graph = createCoderGraph({ probe: () => Promise.resolve(profile) }).compile({
      checkpointer: new MemorySaver(),
    });
    const config = runConfig(thread, {
      provider: "openai",
      baseUrl: f.baseUrl,
      model: MODEL,
      workspace: tempWorkspace(),
      retryBaseMs: 5,
    });
    const before = f.chatBodies({ turnsOnly: true }).length;
    const state = (await graph.invoke(
      { messages: [new HumanMessage("Create f0.txt and f1.txt")] },
      config,
    )) as CoderStateValue;
    expect(state.status).toBe("done");
    return f.chatBodies({ turnsOnly: true }).slice(before) as unknown as Array<
      Record<string, unknown>
    >;
  }

  it("every turn of a thread asks for the thread's slot, and for its cache", async () => {
    const f = await startFakeOpenAI({ server: "llama.cpp", script });
    closers.push(() => f.close());
    for (const thread of ["thread-one", "thread-two"]) {
      const sent = await runThread(f, thread, 4);
      expect(sent.length).toBe(3);
      for (const b of sent)
        expect(b).toMatchObject({ id_slot: slotFor(thread, 4), cache_prompt: true });
    }
    expect(slotFor("thread-one", 4)).not.toBe(slotFor("thread-two", 4));
  });

  it("a one-slot server gets no id_slot", async () => {
    const f = await startFakeOpenAI({ server: "llama.cpp", script });
    closers.push(() => f.close());
    const sent = await runThread(f, "solo", undefined);
    for (const b of sent) expect(b).not.toHaveProperty("id_slot");
  });
});
