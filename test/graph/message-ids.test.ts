/**
 * What a turn's messages carry into every checkpoint write and snapshot (issue 48): keel's own
 * short ids (`k<position in the thread>`), the calls' ids as Ollama gave them (ChatOllama replaces
 * each with a random UUID), and of the server's metadata only what keel reads (`keel_usage`,
 * `keel_turn`).
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { runConfig } from "../../src/coder/context.js";
import { createCoderGraph } from "../../src/coder/graph.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  runCoder,
  tempWorkspace,
  toolMessages,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();

const twoReads = keelScript((req) =>
  req.turn < 2
    ? calls(call("list_dir", { path: "." }), call("read_file", { path: `f${req.turn}.txt` }))
    : { content: "Done." },
);

describe("a turn's messages", () => {
  it.each([false, true])(
    "get keel's short ids, by position in the thread (messages streamed: %s)",
    async (streamed) => {
      const fake = await startFake({ script: twoReads });
      const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
      const config = runConfig(`ids-${String(streamed)}`, {
        ollamaUrl: fake.url,
        workspace: tempWorkspace(),
      });
      const input = { messages: [new HumanMessage("what is in f0.txt and f1.txt?")] };
      if (streamed) {
        // as the CLI runs it: LangGraph's messages stream names every message it has not got an id
        let chunks = 0;
        for await (const chunk of await graph.stream(input, { ...config, streamMode: "messages" }))
          if (chunk) chunks++;
        expect(chunks).toBeGreaterThan(0);
      } else await graph.invoke(input, config);
      const state = (await graph.getState(config)).values as CoderStateValue;
      expect(state.status).toBe("done");
      // the request (LangGraph's id), then every message keel wrote, numbered in order
      const ids = state.messages.map((m) => m.id);
      expect(ids.slice(1)).toEqual(ids.slice(1).map((_, i) => `k${i + 1}`));
    },
  );

  it("keep Ollama's call ids, so each result names the call the server made", async () => {
    const fake = await startFake({ script: twoReads });
    const { state } = await runCoder(fake, "what is in f0.txt and f1.txt?", {
      workspace: tempWorkspace(),
    });
    const ai = state.messages.filter((m): m is AIMessage => AIMessage.isInstance(m));
    const ids = ai.flatMap((m) => m.tool_calls!.map((c) => c.id));
    expect(ids).toHaveLength(4);
    for (const id of ids) expect(id).toMatch(/^call_[a-z0-9]{8}$/);
    // what the server is sent back: its own ids, on the calls and on the results
    const last = fake.chatBodies({ turnsOnly: true }).at(-1)!;
    const sentCalls = last.messages!.flatMap((m) => m.tool_calls ?? []).map((c) => c.id);
    expect(sentCalls).toEqual(ids);
    expect(toolMessages(last).map((m) => m.tool_call_id)).toEqual(ids);
    const results = state.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
    expect(results.map((m) => m.tool_call_id)).toEqual(ids);
  });

  it("keep keel's own metadata of a turn and nothing else of the server's", async () => {
    const fake = await startFake({ script: twoReads });
    const { state } = await runCoder(fake, "what is in f0.txt and f1.txt?", {
      workspace: tempWorkspace(),
    });
    const ai = state.messages.filter((m): m is AIMessage => AIMessage.isInstance(m));
    for (const m of ai) {
      expect(Object.keys(m.response_metadata).sort()).toEqual(["keel_turn", "keel_usage"]);
      expect(m.usage_metadata).toBeUndefined();
    }
    // the server's counts are there, as keel reads them
    expect(
      (ai[0]!.response_metadata as { keel_usage: { promptTokens: number } }).keel_usage,
    ).toMatchObject({ promptTokens: expect.any(Number) as number });
  });
});
