/**
 * `npx tsx bench/real-slots.ts [--threads 1,3,6] [--reads 16]`: prompt tokens a REAL llama-server
 * serves from its cache (its own counters, `timings.cache_n`) when several keel threads share it,
 * each reading notes one by one, as keel sends them (no `id_slot`) and with each thread's turns
 * asked of one slot (`id_slot`, added by the front: what keel did before),
 * on the server's default slots (4 sharing one KV cache, `kv_unified`) and on `-np 4` (4 slots
 * splitting the context). Every request goes through a front (real-front.ts) that has the server
 * prefill it and answers from a script. Needs `npm run real-servers` (KEEL_LLAMA_SERVER,
 * KEEL_GGUF_TINY_QWEN2).
 */
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { runConfig } from "../src/coder/context.js";
import { createCoderGraph } from "../src/coder/graph.js";
import { readEnv } from "../src/env.js";
import { locateRealServers, startLlamaServer } from "../src/testing/real-servers.js";
import { keelScript } from "../src/testing/script.js";
import { option } from "./args.js";
import { REQUEST, reader, workspace } from "./prefill.js";
import { startFront } from "./real-front.js";

const THREADS = (option("--threads") ?? "1,3,6").split(",").map(Number);
const READS = Number(option("--reads") ?? "16");
const WINDOW = 8192;
const REAL = locateRealServers(readEnv().realServers);
const binary = REAL.llamaServer;
const gguf = REAL.ggufs["tiny-qwen2"];
if (!binary || !gguf) {
  console.error("needs KEEL_LLAMA_SERVER and KEEL_GGUF_TINY_QWEN2 (npm run real-servers)");
  process.exit(2);
}

/** The server's slot set-ups measured: its default, and four slots splitting the context. */
const SETUPS = [
  { name: "default (4 slots, one KV cache)", ctx: WINDOW * 2, slots: undefined },
  { name: "-np 4 (4 slots, split)", ctx: WINDOW * 4, slots: 4 },
] as const;

async function measure(setup: (typeof SETUPS)[number], threads: number, pin: boolean) {
  const server = await startLlamaServer({
    binary: binary!,
    gguf: gguf!,
    ctx: setup.ctx,
    ...(setup.slots ? { slots: setup.slots } : {}),
  });
  const script = keelScript(reader(READS), {
    plan: ["Read each note", "Summarise them"],
    intent: "analyze",
  });
  // keel sends no id_slot; pinned, each thread asks for slot (set number mod 4), as keel once did.
  const rewrite = (body: Record<string, unknown>) => {
    const set = /\(set (\d+)\)/.exec(JSON.stringify(body.messages));
    if (pin && set) body.id_slot = Number(set[1]) % 4;
  };
  const front = await startFront({ upstream: server.url, kind: "llama.cpp", script, rewrite });
  try {
    await Promise.all(
      Array.from({ length: threads }, async (_, t) => {
        const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
        const config = runConfig(`real-slots-${threads}-${t}`, {
          provider: "openai",
          baseUrl: front.url,
          model: "tiny-qwen2",
          workspace: workspace(READS),
          contextWindow: WINDOW,
          maxTurns: READS + 5,
          retryBaseMs: 5,
        });
        await graph.invoke({ messages: [new HumanMessage(`${REQUEST} (set ${t})`)] }, config);
      }),
    );
  } finally {
    await front.close();
    await server.close();
  }
  const ok = front.records.filter((r) => r.status === 200);
  const prompt = ok.reduce((n, r) => n + r.promptTokens, 0);
  const cached = ok.reduce((n, r) => n + r.cachedTokens, 0);
  const seconds = ok.reduce((n, r) => n + r.promptMs, 0) / 1000;
  return {
    requests: ok.length,
    fromCache: (100 * cached) / prompt,
    evaluated: prompt - cached,
    seconds,
  };
}

console.log(`keel threads sharing one real llama-server (tiny-qwen2), ${READS} reads each\n`);
console.log(
  "| server | threads | id_slot | requests | from cache | tokens evaluated | prompt-eval s |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const setup of SETUPS)
  for (const threads of THREADS)
    for (const pin of [false, true]) {
      const m = await measure(setup, threads, pin);
      console.log(
        `| ${setup.name} | ${threads} | ${pin ? "yes" : "no"} | ${m.requests} | ${m.fromCache.toFixed(1)}% | ${m.evaluated.toLocaleString("en")} | ${m.seconds.toFixed(1)} |`,
      );
    }
