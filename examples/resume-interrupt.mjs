// An interactive run pauses at an interrupt (here: approving a command that reaches beyond the
// workspace); a person's answer resumes it with a Command. Works the same from LangGraph Studio.
//   OLLAMA_HOST=http://127.0.0.1:11434 node examples/resume-interrupt.mjs [workspace] ["request"] [answer]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createCoderGraph, runConfig } from "keel-agent";

const workspace = process.argv[2] ?? mkdtempSync(path.join(tmpdir(), "keel-example-"));
const request = process.argv[3] ?? "Run `curl -sI https://example.com` and tell me the status";
const answer = process.argv[4] ?? "yes";
const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
const config = runConfig("interrupt-example", {
  workspace,
  interactive: true,
  model: process.env.KEEL_MODEL ?? "qwen3:8b",
});

await graph.invoke({ messages: [new HumanMessage(request)] }, config);
let snapshot = await graph.getState(config);
while (snapshot.tasks.some((t) => t.interrupts.length)) {
  const question = snapshot.tasks.flatMap((t) => t.interrupts)[0].value;
  console.log(`interrupted: ${question.question}`);
  console.log(`answering: ${answer}`);
  await graph.invoke(new Command({ resume: answer }), config);
  snapshot = await graph.getState(config);
}
console.log(`status: ${snapshot.values.status}`);
console.log(snapshot.values.summary);
