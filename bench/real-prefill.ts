/**
 * Real model time: bench/prefill.ts's long read-heavy task (read 80 notes one by one, then answer)
 * for keel, the prebuilt ReAct agent and createAgent, each against a REAL llama-server (and a real
 * Ollama, real-ollama.ts) through a front (real-front.ts) that has the server prefill every request
 * and answers from the script. The cache figures are the server's own counters:
 *
 *   from cache %   Σ cache_n / Σ (cache_n + prompt_n) over the agent's requests
 *   breaks         requests whose cached tokens are under half the previous request's prompt
 *   prompt-eval s  Σ timings.prompt_ms
 *   ceiling %      1 − Σ newest-turn tokens / Σ prompt tokens: what prompts of the same sizes would
 *                  get if each request only appended its newest turn (an assistant message and its
 *                  results) to the previous one — the never-folding, never-moving ideal. The
 *                  newest turn's tokens come from the server: its /apply-template and /tokenize of
 *                  the request with and without that turn.
 *
 * Each agent gets a freshly started server (empty cache, default 4 slots). keel runs with its
 * context window set to the window measured; the peers have no window and send everything, so
 * their server's slots are made large enough for 80 turns, and the requests that would not fit the
 * window are counted (a llama-server with that context refuses them; Ollama cuts them).
 */
import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { createAgent } from "langchain";
import { runConfig, type SettingsInput } from "../src/coder/context.js";
import { createCoderGraph } from "../src/coder/graph.js";
import { RECORD_HEADER } from "../src/coder/history/record.js";
import { keelScript } from "../src/testing/script.js";
import { toolsForIntent } from "../src/tools/registry.js";
import { AGENTS, type AgentName } from "./agents.js";
import { REQUEST, reader, workspace } from "./prefill.js";
import { startFront, type FrontRecord } from "./real-front.js";

/** How one agent's model is made, and the keel settings that reach the same server. */
export interface ServerSide {
  kind: "llama.cpp" | "ollama";
  /** Starts a fresh server for one agent's run; `slotTokens` is the context each request may use. */
  start(
    slotTokens: number,
  ): Promise<{ url: string; model: string; log?(): string; close(): Promise<void> }>;
  /** The peers' chat model on the front at `url`. */
  peerModel(url: string, model: string, window: number): BaseChatModel;
  /** keel's settings for the front at `url`. */
  keelSettings(url: string, model: string): Partial<SettingsInput>;
  /** Tokens of the newest turn of each request (for the ceiling), or undefined if not measurable. */
  newestTurnTokens?(url: string, records: FrontRecord[]): Promise<number[]>;
  /** Fills in `cachedTokens` where the server does not report it (Ollama). */
  derive?(records: FrontRecord[], log: string): void;
}

export interface AgentRun {
  records: FrontRecord[];
  /** Indices of the requests keel folded before sending. */
  folds: Set<number>;
  newest?: number[];
}

/** How the task is run: lines per note read (default 24), and keel's `cacheReuse` setting. */
export interface TaskOptions {
  noteLines?: number;
  cacheReuse?: number;
}

/** Runs one agent on the task through a front to a fresh real server. */
export async function runAgent(
  side: ServerSide,
  agent: AgentName,
  turns: number,
  window: number,
  { noteLines = 24, cacheReuse = 0 }: TaskOptions = {},
): Promise<AgentRun> {
  // The peers never fold: their slots must hold the whole task (~700 tokens a read, generously).
  const slot = agent === "keel" ? window : Math.max(window, 8192 + turns * 900);
  const server = await side.start(slot);
  const script = keelScript(reader(turns), {
    plan: ["Read each note", "Summarise them"],
    intent: "analyze",
  });
  const front = await startFront({ upstream: server.url, kind: side.kind, script });
  const ws = workspace(turns, noteLines);
  const folds = new Set<number>();
  try {
    if (agent === "keel") {
      const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
      const config = runConfig(`real-prefill-${turns}`, {
        workspace: ws,
        model: server.model,
        ...side.keelSettings(front.url, server.model),
        contextWindow: window,
        cacheReuse,
        maxTurns: turns + 5,
        maxToolCalls: turns + 5,
        loopWindowCount: 1000,
        loopNoProgress: 1000,
      });
      const stream = await graph.stream(
        { messages: [new HumanMessage(REQUEST)] },
        { ...config, streamMode: "custom" },
      );
      for await (const e of stream)
        if ((e as { type?: string }).type === "compacted") folds.add(front.records.length);
    } else {
      const model = side.peerModel(front.url, server.model, window);
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
      const config = { configurable: { thread_id: "real" }, recursionLimit: turns * 3 + 20 };
      const graph =
        agent === "createAgent"
          ? createAgent({ model, tools, checkpointer: new MemorySaver() })
          : createReactAgent({ llm: model, tools, checkpointSaver: new MemorySaver() });
      await graph.invoke({ messages: [new HumanMessage(REQUEST)] }, config).catch((err: Error) => {
        // a refused request ends a peer's run; the records say where
        process.stderr.write(`  ${agent} stopped: ${err.message.slice(0, 160)}\n`);
      });
    }
    const newest = await side.newestTurnTokens?.(server.url, front.records);
    side.derive?.(front.records, server.log?.() ?? "");
    return { records: [...front.records], folds, ...(newest ? { newest } : {}) };
  } finally {
    await front.close();
    await server.close();
  }
}

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/**
 * Why a request lost the cache: where its messages first differ from the previous request's, and
 * whether keel folded before sending it.
 */
export function breakCause(
  prev: FrontRecord | undefined,
  cur: FrontRecord,
  folded: boolean,
): string {
  const a = (prev?.body.messages ?? []) as Array<{ role: string; content?: unknown }>;
  const b = (cur.body.messages ?? []) as Array<{ role: string; content?: unknown }>;
  if (JSON.stringify(prev?.body.tools) !== JSON.stringify(cur.body.tools)) return "tools changed";
  let i = 0;
  while (i < a.length && i < b.length && JSON.stringify(a[i]) === JSON.stringify(b[i])) i++;
  if (i >= a.length) return "slot (prefix unchanged)";
  const m = b[i];
  const text = typeof m?.content === "string" ? m.content : "";
  if (m?.role === "system") return "system prompt changed";
  if (text.startsWith(RECORD_HEADER))
    return folded
      ? `fold (message ${i} became the record)`
      : `the record changed without a fold (message ${i})`;
  return `message ${i} (${m?.role ?? "none"}) changed`;
}

/** One agent's figures from the server's counts. */
export function figures(run: AgentRun, window: number) {
  const ok = run.records.filter((r) => r.status === 200);
  const prompt = ok.reduce((a, r) => a + r.promptTokens, 0);
  const cached = ok.reduce((a, r) => a + r.cachedTokens, 0);
  const breaks: Array<{ request: number; cached: number; previous: number; cause: string }> = [];
  run.records.forEach((r, i) => {
    const prev = run.records[i - 1];
    if (i === 0 || r.status !== 200 || !prev) return;
    if (r.cachedTokens < 0.5 * prev.promptTokens)
      breaks.push({
        request: i + 1,
        cached: r.cachedTokens,
        previous: prev.promptTokens,
        cause: breakCause(prev, r, run.folds.has(i)),
      });
  });
  const newest = run.newest?.reduce((a, n) => a + n, 0);
  const refused = run.records.findIndex((r) => r.status !== 200);
  return {
    requests: run.records.length,
    "prompt tokens": prompt,
    "from cache %": round((cached / Math.max(1, prompt)) * 100),
    "ceiling %": newest === undefined ? "n/a" : round((1 - newest / Math.max(1, prompt)) * 100),
    "breaks (<½ reused)": breaks.length,
    "prompt-eval s": round(ok.reduce((a, r) => a + r.promptMs, 0) / 1000, 2),
    folds: run.folds.size,
    "largest prompt": Math.max(0, ...ok.map((r) => r.promptTokens)),
    [`over ${window}`]: ok.filter((r) => r.promptTokens >= window).length,
    refused: refused < 0 ? "none" : `#${refused + 1}: ${run.records[refused]!.error?.slice(0, 80)}`,
    "cached_tokens = cache_n": ok.every(
      (r) => r.reportedCached === undefined || r.reportedCached === r.cachedTokens,
    ),
    _breaks: breaks,
    /** Per request: [prompt tokens, cached tokens]. */
    _trace: run.records.map((r) => [r.promptTokens, r.cachedTokens]),
  };
}

/** The real model-time table for one server: every agent at every window, and keel's targets. */
export async function benchRealPrefill(
  side: ServerSide,
  windows = [8192, 4096],
  turns = 80,
  agents: readonly AgentName[] = AGENTS,
  task: TaskOptions = {},
) {
  const rows: Array<Record<string, unknown>> = [];
  const checks: Record<string, unknown> = {};
  const runs = new Map<string, AgentRun>();
  const runOnce = async (agent: AgentName, window: number) => {
    // on llama-server the peers have no window: one run serves every window (Ollama cuts at theirs)
    const key = agent === "keel" || side.kind === "ollama" ? `${agent} ${window}` : agent;
    let run = runs.get(key);
    if (!run) {
      const started = performance.now();
      process.stderr.write(`real model time (${side.kind}): ${agent}, window ${window}…\n`);
      run = await runAgent(side, agent, turns, window, task);
      runs.set(key, run);
      process.stderr.write(`  ${round((performance.now() - started) / 1000)} s\n`);
    }
    return run;
  };
  for (const window of windows) {
    const byAgent = new Map<AgentName, ReturnType<typeof figures>>();
    for (const agent of agents) {
      const f = figures(await runOnce(agent, window), window);
      byAgent.set(agent, f);
      const { _breaks, _trace, ...row } = f;
      rows.push({ server: side.kind, window, agent, ...row });
      if (agent === "keel" || window === windows[0]) {
        checks[`${side.kind} ${window}: ${agent} breaks`] = _breaks;
        checks[`${side.kind} ${window}: ${agent} trace`] = _trace;
      }
    }
    const keel = byAgent.get("keel")!;
    const ceiling = keel["ceiling %"];
    checks[`${side.kind} ${window}: keel from cache %`] = keel["from cache %"];
    if (typeof ceiling === "number")
      checks[`${side.kind} ${window}: keel points under the ceiling`] = round(
        ceiling - keel["from cache %"],
      );
    checks[`${side.kind} ${window}: keel breaks per request`] = round(
      keel["breaks (<½ reused)"] / keel.requests,
      3,
    );
    const peers = [...byAgent].filter(([a]) => a !== "keel").map(([, f]) => f["prompt-eval s"]);
    if (peers.length)
      checks[`${side.kind} ${window}: keel prompt-eval s / best peer`] = round(
        keel["prompt-eval s"] / Math.min(...peers),
        3,
      );
  }
  return { rows, checks };
}
