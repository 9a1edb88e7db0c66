/**
 * Model time, the cost that matters on a local model: the same read-heavy task for keel, the
 * prebuilt ReAct agent and createAgent, each through ChatOllama against the fake Ollama with its
 * prefill model (src/testing/fake-ollama/prefill.ts: one KV-cache slot, prefill after the longest
 * common prefix, front truncation past the window). Every agent gets the same model (context
 * 8,192, num_ctx 8,192), the same tools (keel's read-only set) and the same scripted behaviour:
 * read the next note, until the task's length, then answer.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { ChatOllama } from "@langchain/ollama";
import { createAgent } from "langchain";
import { runConfig } from "../src/coder/context.js";
import { createCoderGraph } from "../src/coder/graph.js";
import {
  MACHINES,
  simulatedSeconds,
  startFakeOllama,
  type ChatView,
  type PrefillRecord,
  type Reply,
} from "../src/testing/fake-ollama/index.js";
import { keelScript } from "../src/testing/script.js";
import { toolsForIntent } from "../src/tools/registry.js";
import { AGENTS, type AgentName } from "./agents.js";
import { benchTemp } from "./temp.js";

const MODEL = "bench-coder:8b";
const CONTEXT = 8192;
export const REQUEST =
  "Summarise the notes in notes/, reading them one by one starting with notes/n0.txt.";

/** A note of a realistic size: a short source file (~1,100 characters at 24 lines). */
export const note = (i: number, lines = 24) =>
  Array.from(
    { length: lines },
    (_, l) => `export const value${i}_${l} = compute(${i}, ${l}); // line ${l} of note ${i}`,
  ).join("\n") + "\n";

export function workspace(files: number, lines = 24): string {
  const dir = benchTemp("keel-bench-prefill-");
  mkdirSync(path.join(dir, "notes"));
  for (let i = 0; i < files; i++) writeFileSync(path.join(dir, `notes/n${i}.txt`), note(i, lines));
  return dir;
}

/** The scripted model: the next note after the newest one the conversation asked for, then an answer. */
export function reader(turns: number) {
  return (req: ChatView): Reply => {
    let next = 0;
    for (let i = req.messages.length - 1; i >= 0 && next === 0; i--) {
      const m = req.messages[i]!;
      const text = m.role === "assistant" ? JSON.stringify(m.tool_calls ?? []) + m.content : "";
      const found = [...text.matchAll(/n(\d+)\.txt/g)].map((x) => Number(x[1]));
      if (found.length) next = Math.max(...found) + 1;
    }
    return next < turns
      ? {
          content: "",
          toolCalls: [{ name: "read_file", arguments: { path: `notes/n${next}.txt` } }],
        }
      : { content: `I read ${next} notes: each defines 24 computed values.` };
  };
}

/** Runs one agent on a task of `turns` reads; returns the fake's account of every request. */
async function runTask(agent: AgentName, turns: number) {
  const fake = await startFakeOllama({
    models: {
      [MODEL]: { capabilities: ["completion", "tools"], family: "qwen3", contextLength: CONTEXT },
    },
    script: keelScript(reader(turns), {
      plan: ["Read each note", "Summarise them"],
      intent: "analyze",
    }),
  });
  const ws = workspace(turns);
  let folds = 0;
  try {
    if (agent === "keel") {
      const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
      const config = runConfig(`prefill-${turns}`, {
        workspace: ws,
        model: MODEL,
        ollamaUrl: fake.url,
        maxTurns: turns + 5,
        maxToolCalls: turns + 5,
        contextWindow: 16_384, // the default: keel caps it at the model's 8,192
        loopWindowCount: 1000,
        loopNoProgress: 1000,
      });
      const stream = await graph.stream(
        { messages: [new HumanMessage(REQUEST)] },
        { ...config, streamMode: "custom" },
      );
      for await (const e of stream) if ((e as { type?: string }).type === "compacted") folds++;
    } else {
      const model = new ChatOllama({
        model: MODEL,
        baseUrl: fake.url,
        numCtx: CONTEXT,
        temperature: 0.2,
      });
      const tools = toolsForIntent("analyze").map((t) =>
        tool(
          async (args: unknown) => {
            const r = await t.run(args, {
              workspace: ws,
              commandTimeoutMs: 10_000,
              outputLimit: 16_000,
            });
            return r.ok ? r.output : r.message;
          },
          { name: t.name, description: t.description, schema: t.schema },
        ),
      );
      const config = { configurable: { thread_id: "prefill" }, recursionLimit: turns * 3 + 20 };
      const graph =
        agent === "createAgent"
          ? createAgent({ model, tools, checkpointer: new MemorySaver() })
          : createReactAgent({ llm: model, tools, checkpointSaver: new MemorySaver() });
      await graph.invoke({ messages: [new HumanMessage(REQUEST)] }, config);
    }
    return { records: [...fake.prefill], bodies: fake.chatBodies(), folds };
  } finally {
    await fake.close();
  }
}

const seconds = simulatedSeconds;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** One agent's figures on one task length. */
function figures(
  agent: AgentName,
  records: PrefillRecord[],
  bodies: Array<{ format?: unknown }>,
  folds: number,
) {
  const prefill = records.reduce((a, r) => a + r.evaluatedTokens, 0);
  // Two readings of "reused from the previous request": the share of each prompt the cache served
  // (bounded by how much each turn adds), and the share of the previous prompt kept as its prefix.
  const reuse =
    records.reduce((a, r) => a + r.cachedChars, 0) / records.reduce((a, r) => a + r.promptChars, 0);
  const kept =
    records
      .slice(1)
      .reduce((a, r, i) => a + Math.min(1, r.cachedChars / records[i]!.promptChars), 0) /
    Math.max(1, records.length - 1);
  const firstCut = records.findIndex((r) => r.truncated);
  // The limit: only the model turns' own cost (each prefills its new tokens, a fold re-prefills
  // once), without the calls that are not turns (keel's intent and plan requests).
  const turns = records.filter((_, i) => bodies[i]?.format === undefined);
  const row = {
    agent,
    requests: records.length,
    "prefill tokens": prefill,
    "prompt served from cache %": round(reuse * 100),
    "previous prompt kept %": round(kept * 100),
    "requests rewriting the prefix": records.filter((r) => r.rewrote).length,
    "first request cut at the window": firstCut < 0 ? "never" : `#${firstCut + 1}`,
    "CPU s": round(records.reduce((a, r) => a + seconds(r, MACHINES.cpu), 0)),
    "GPU s": round(
      records.reduce((a, r) => a + seconds(r, MACHINES.gpu), 0),
      2,
    ),
  };
  const limit = {
    cpu: turns.reduce((a, r) => a + seconds(r, MACHINES.cpu), 0),
    gpu: turns.reduce((a, r) => a + seconds(r, MACHINES.gpu), 0),
  };
  return { row, limit, folds, reuse, rewrites: row["requests rewriting the prefix"] };
}

export const PREFILL_LENGTHS = [10, 40, 80, 160];

/** The model-time table: every agent at every length, and keel's targets. */
export async function benchPrefill(lengths = PREFILL_LENGTHS) {
  const rows: Array<Record<string, string | number>> = [];
  const checks: Record<string, number | string | boolean> = {};
  for (const turns of lengths) {
    const byAgent = new Map<AgentName, ReturnType<typeof figures>>();
    for (const agent of AGENTS) {
      process.stderr.write(`model time: ${agent}, ${turns} reads…\n`);
      const { records, bodies, folds } = await runTask(agent, turns);
      const f = figures(agent, records, bodies, folds);
      byAgent.set(agent, f);
      rows.push({ turns, ...f.row });
    }
    const keel = byAgent.get("keel")!;
    const peers = AGENTS.filter((a) => a !== "keel").map((a) => byAgent.get(a)!);
    for (const m of ["CPU s", "GPU s"] as const) {
      const best = Math.min(...peers.map((p) => Number(p.row[m])));
      checks[`${turns} reads: keel ${m} / best peer`] = round(Number(keel.row[m]) / best, 2);
    }
    checks[`${turns} reads: keel CPU s / limit`] = round(
      Number(keel.row["CPU s"]) / keel.limit.cpu,
      2,
    );
    checks[`${turns} reads: keel prompt chars served from the cache %`] =
      keel.row["prompt served from cache %"];
    checks[`${turns} reads: keel previous prompt kept as prefix %`] =
      keel.row["previous prompt kept %"];
    checks[`${turns} reads: keel requests rewriting the prefix %`] = round(
      (keel.rewrites / keel.row.requests) * 100,
    );
    checks[`${turns} reads: keel folds`] = keel.folds;
  }
  return { machines: MACHINES, rows, checks };
}
