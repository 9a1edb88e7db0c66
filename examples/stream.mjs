// Stream a run's updates node by node: what the model decided, each tool call and its result.
//   OLLAMA_HOST=http://127.0.0.1:11434 node examples/stream.mjs [workspace] ["request"]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createCoderGraph, runConfig } from "keel-agent";

const workspace = process.argv[2] ?? mkdtempSync(path.join(tmpdir(), "keel-example-"));
const request = process.argv[3] ?? "Create hello.py that prints hello";
const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
const config = runConfig("stream-example", {
  workspace,
  model: process.env.KEEL_MODEL ?? "qwen3:8b",
});
for await (const update of await graph.stream(
  { messages: [new HumanMessage(request)] },
  { ...config, streamMode: "updates" },
)) {
  for (const [node, change] of Object.entries(update)) {
    const messages = [change?.messages ?? []].flat();
    const calls = messages
      .flatMap((m) => m.tool_calls ?? [])
      .map((c) => `${c.name}(${JSON.stringify(c.args)})`);
    const results = messages
      .filter((m) => m.getType?.() === "tool")
      .map((m) => `${m.status}: ${String(m.content).slice(0, 60)}`);
    console.log(
      `[${node}]`,
      [...calls, ...results].join(" | ") || Object.keys(change ?? {}).join(", "),
    );
  }
}
const final = await graph.getState(config);
console.log(`status: ${final.values.status}`);
