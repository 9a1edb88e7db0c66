// Run keel's coder agent on one request and print the outcome.
//   OLLAMA_HOST=http://127.0.0.1:11434 node examples/invoke.mjs [workspace] ["request"]
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runAgent } from "keel-agent";

const workspace = process.argv[2] ?? mkdtempSync(path.join(tmpdir(), "keel-example-"));
const request = process.argv[3] ?? "Create hello.py that prints hello";
const state = await runAgent(request, { workspace, model: process.env.KEEL_MODEL ?? "qwen3:8b" });
console.log(`status: ${state.status}`);
console.log(`files written: ${state.filesWritten.join(", ") || "none"}`);
console.log(
  `tool calls: ${state.trail.map((t) => `${t.name}${t.ok ? "" : " (failed)"}`).join(", ")}`,
);
console.log(state.summary);
