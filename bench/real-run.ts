/**
 * `npm run bench:real`: real model time (real-prefill.ts) on the real servers the installer
 * provides (`KEEL_LLAMA_SERVER`, `KEEL_OLLAMA`, `KEEL_GGUF_<NAME>`). Prints the tables and writes
 * bench/real-results.json. Options: `--model NAME` (a `KEEL_GGUF_<NAME>`, lower case with `-`, also
 * the Ollama model's name; default the first whose name has "tiny"), `--turns N` (default 80), `--windows 8192,4096`, `--servers llama.cpp,ollama`, `--agents keel,createAgent,prebuilt ReAct`, `--note-lines N` (lines per note read, default 24), `--cache-reuse N` (keel's `cacheReuse`: llama-server's `n_cache_reuse`, default 0), `--out FILE` (under bench/).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { AGENTS, type AgentName } from "./agents.js";
import { option } from "./args.js";
import { benchRealPrefill } from "./real-prefill.js";
import { llamaSide, ollamaSide } from "./real-sides.js";
import { readEnv } from "../src/env.js";
import { locateRealServers } from "../src/testing/real-servers.js";

const REAL = locateRealServers(readEnv().realServers);

const arg = (name: string) => option(`--${name}`);

const names = Object.keys(REAL.ggufs);
const modelName = arg("model") ?? names.find((n) => n.includes("tiny")) ?? names[0];
const gguf = modelName ? REAL.ggufs[modelName] : undefined;
if (!gguf) {
  console.error(
    `no model: set KEEL_GGUF_<NAME> (have: ${names.join(", ") || "none"}); run the real-server installer`,
  );
  process.exit(2);
}
const turns = Number(arg("turns") ?? 80);
const windows = (arg("windows") ?? "8192,4096").split(",").map(Number);
const servers = (arg("servers") ?? "llama.cpp,ollama").split(",");
const agents = (arg("agents")?.split(",") ?? AGENTS) as AgentName[];
// Lines per note read (default 24: ~707 Qwen2 tokens a read; 20 gives ~590, the reads).
const noteLines = Number(arg("note-lines") ?? 24);
// keel's `cacheReuse` setting (llama-server's n_cache_reuse; default 0: off).
const cacheReuse = Number(arg("cache-reuse") ?? 0);
const task = { noteLines, cacheReuse };

const results: Record<string, unknown> = { model: modelName, turns, windows, ...task };
const started = performance.now();
if (servers.includes("llama.cpp") && REAL.llamaServer) {
  const r = await benchRealPrefill(llamaSide(REAL.llamaServer, gguf), windows, turns, agents, task);
  results["llama.cpp"] = r;
  console.log(`Real llama-server, ${modelName}, ${turns} reads (the server's own cache counters)`);
  console.table(r.rows);
  console.table(Object.fromEntries(Object.entries(r.checks).filter(([, v]) => !Array.isArray(v))));
}
if (servers.includes("ollama") && REAL.ollama && REAL.ollamaModels) {
  const side = ollamaSide(REAL.ollama, REAL.ollamaModels, modelName!);
  const r = await benchRealPrefill(side, windows, turns, agents, task);
  results.ollama = r;
  console.log(`Real Ollama, ${modelName}, ${turns} reads`);
  console.table(r.rows);
}
results.seconds = Math.round((performance.now() - started) / 1000);
const out = path.resolve(import.meta.dirname, arg("out") ?? "real-results.json");
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`written ${out} (${String(results.seconds)} s)`);
