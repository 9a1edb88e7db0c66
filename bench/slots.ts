/**
 * `npx tsx bench/slots.ts`: prompt tokens served from a multi-slot llama-server's cache (its own
 * counter, cached_tokens) when 1, 3, 4 and 6 keel threads share one 4-slot server, each reading 12
 * files, with and without `id_slot` (a thread's turns kept on one slot). Needs the fake llama.cpp
 * with slots chosen by prefix similarity (`slots` option) that honours `id_slot` as llama-server
 * does; against a one-slot fake both rows are the same.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { runConfig } from "../src/agent/context.js";
import { createCoderGraph } from "../src/agent/graph.js";
import type { CoderStateValue, TurnUsage } from "../src/agent/state.js";
import { createCapabilityProbe } from "../src/models/probe.js";
import { startFakeOpenAI } from "../src/testing/fake-openai/index.js";
import { call, calls, keelScript } from "../src/testing/script.js";

const READS = 12;
async function measure(threads: number, pin: boolean) {
  const script = keelScript((req) =>
    req.turn < READS
      ? calls(call("read_file", { path: `f${req.turn}.txt` }))
      : { content: "Read them all." },
  );
  const f = await startFakeOpenAI({ server: "llama.cpp", script, slots: 4 } as never);
  const base = createCapabilityProbe();
  const probe: typeof base = async (...a) => {
    const p = await base(...a);
    if (pin) return p;
    const { slots: _, ...rest } = p;
    return rest;
  };
  const runs = Array.from({ length: threads }, async (_, t) => {
    const ws = mkdtempSync(path.join(tmpdir(), "keel-slots-"));
    for (let i = 0; i < READS; i++)
      writeFileSync(
        path.join(ws, `f${i}.txt`),
        `thread ${t} file ${i}\n` + `const v${i} = ${t * 100 + i};\n`.repeat(30),
      );
    const graph = createCoderGraph({ probe }).compile({ checkpointer: new MemorySaver() });
    const config = runConfig(`slot-thread-${t}`, {
      provider: "openai",
      baseUrl: f.baseUrl,
      model: "qwen2.5-coder-7b-instruct",
      workspace: ws,
      retryBaseMs: 5,
      maxTurns: 20,
    });
    const s = (await graph.invoke(
      {
        messages: [
          new HumanMessage(`Read every file in this folder (set ${t}) and say what they hold`),
        ],
      },
      config,
    )) as CoderStateValue;
    return s.messages
      .filter((m) => AIMessage.isInstance(m))
      .map((m) => (m.response_metadata as { keel_usage?: TurnUsage }).keel_usage)
      .filter((u): u is TurnUsage => !!u);
  });
  const usage = (await Promise.all(runs)).flat();
  await f.close();
  const prompt = usage.reduce((n, u) => n + u.promptTokens, 0);
  const cached = usage.reduce((n, u) => n + u.reusedTokens, 0);
  const low = usage.filter((u) => u.reusedTokens < u.promptTokens / 2).length;
  return `${threads} threads, ${pin ? "id_slot   " : "no id_slot"}: ${usage.length} turns, ${((100 * cached) / prompt).toFixed(1)}% of prompt tokens from the server's cache, ${low} turns reusing < half`;
}
for (const threads of [1, 3, 4, 6])
  for (const pin of [false, true]) console.log(await measure(threads, pin));
