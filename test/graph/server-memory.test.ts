/**
 * A server that rejects one request argument (issue 27): keel drops the named argument, sends the
 * request again, remembers the drop in the store for that server, and the next run's first
 * request leaves it out; a refusal with nothing keel can drop still ends the run, named.
 */
import { HumanMessage } from "@langchain/core/messages";
import { InMemoryStore, MemorySaver, type BaseStore } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { runConfig } from "../../src/coder/context.js";
import { createCoderGraph } from "../../src/coder/graph.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { ModelServerError } from "../../src/models/errors.js";
import type { ServerKind } from "../../src/models/openai/quirks.js";
import { readServer } from "../../src/run/server-memory.js";
import { startFakeOpenAI, type FakeOpenAI } from "../../src/testing/fake-openai/index.js";
import { call, calls, keelScript, tempWorkspace } from "../support/harness.js";

const MODEL = "qwen2.5-coder-7b-instruct";
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const writeHello = keelScript((req) =>
  req.turn === 0
    ? calls(call("write_file", { path: "hello.py", content: "print('hi')\n" }))
    : { content: "Wrote hello.py." },
);

let counter = 0;
async function run(f: FakeOpenAI, store: BaseStore) {
  const graph = createCoderGraph().compile({ checkpointer: new MemorySaver(), store });
  const config = runConfig(`mem-${++counter}`, {
    provider: "openai",
    baseUrl: f.baseUrl,
    model: MODEL,
    workspace: tempWorkspace(),
    retryBaseMs: 5,
    learnDescriptions: false,
  });
  return (await graph.invoke(
    { messages: [new HumanMessage("Create hello.py that prints hi")] },
    config,
  )) as CoderStateValue;
}

/** The chat requests' bodies as sent, with the status each got. */
function exchanges(f: FakeOpenAI) {
  return f.requests
    .filter((r) => r.method === "POST" && r.path === "/v1/chat/completions")
    .map((r) => r.body as Record<string, unknown>);
}

describe("a server that rejects one request argument", () => {
  it.each<[ServerKind, string]>([
    ["llama.cpp", "Unrecognized request argument supplied"],
    ["vllm", "Extra inputs are not permitted"],
  ])("%s (%s): dropped, sent again, remembered for the next run", async (server) => {
    const f = await startFakeOpenAI({
      server,
      script: writeHello,
      rejectArguments: ["max_tokens"],
    });
    closers.push(() => f.close());
    const store = new InMemoryStore();
    const first = await run(f, store);
    expect(first.status).toBe("done");
    const sent = exchanges(f);
    // The first request carried it and was refused; the same request went again without it.
    expect("max_tokens" in sent[0]!).toBe(true);
    const { max_tokens: _, ...rest } = sent[0]!;
    expect(sent[1]).toEqual(rest);
    expect(sent.slice(1).every((b) => !("max_tokens" in b))).toBe(true);
    expect((await readServer(store, f.baseUrl))?.dropped).toEqual(["max_tokens"]);

    const before = sent.length;
    const second = await run(f, store);
    expect(second.status).toBe("done");
    const next = exchanges(f).slice(before);
    expect(next.length).toBeGreaterThan(0);
    expect(next.every((b) => !("max_tokens" in b))).toBe(true);
  });

  it("several arguments refused one by one: each dropped in turn", async () => {
    const f = await startFakeOpenAI({
      server: "lmstudio",
      script: writeHello,
      rejectArguments: ["parallel_tool_calls", "max_tokens"],
    });
    closers.push(() => f.close());
    const store = new InMemoryStore();
    expect((await run(f, store)).status).toBe("done");
    expect((await readServer(store, f.baseUrl))?.dropped.sort()).toEqual([
      "max_tokens",
      "parallel_tool_calls",
    ]);
  });

  it("nothing left to drop: the run ends with the server's words", async () => {
    const f = await startFakeOpenAI({ script: writeHello, rejectArguments: ["messages"] });
    closers.push(() => f.close());
    const err = await run(f, new InMemoryStore()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelServerError);
    expect((err as Error).message).toMatch(/Unrecognized request argument supplied: messages/);
  });
});
