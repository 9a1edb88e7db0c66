/**
 * `npm run bench`: keel's overhead next to the prebuilt agents, checkpoint growth, resume cost, the
 * analyst's throughput and the text tool-call parser. Prints a table and writes bench/results.json.
 * Figures and ratios only — machines are shared and noisy, so nothing here is a pass/fail test.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { AGENTS, buildAgent, type AgentName } from "./agents.js";
import { benchAnalyst } from "./analyst.js";
import { benchParsers } from "./parsers.js";

const quick = process.argv.includes("--quick");
const TURNS = quick ? [10, 50] : [10, 100, 300];
const LOADS = quick ? [10, 100] : [10, 300, 1000];
const ms = (n: number) => Math.round(n * 100) / 100;

function workspace(files: number): string {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-bench-"));
  mkdirSync(path.join(dir, "notes"));
  for (let i = 0; i < files; i++)
    writeFileSync(path.join(dir, `notes/n${i}.txt`), `note ${i}\n`.repeat(20));
  return dir;
}

type Kind = "memory" | "sqlite";
function saver(kind: Kind, file: string): BaseCheckpointSaver {
  return kind === "memory" ? new MemorySaver() : SqliteSaver.fromConnString(file);
}

/** Bytes stored for all threads in a SqliteSaver's database. */
function storedBytes(s: BaseCheckpointSaver): number {
  const db = (s as unknown as { db?: { prepare(q: string): { get(): unknown } } }).db;
  if (!db) return NaN;
  try {
    const a = db
      .prepare(
        "SELECT coalesce(sum(length(checkpoint) + length(metadata)), 0) AS n FROM checkpoints",
      )
      .get() as { n: number };
    const b = db.prepare("SELECT coalesce(sum(length(value)), 0) AS n FROM writes").get() as {
      n: number;
    };
    return a.n + b.n;
  } catch {
    return 0; // the saver creates its tables on first use
  }
}

const toolMessagesIn = (chunk: unknown): number =>
  Object.values((chunk ?? {}) as Record<string, { messages?: unknown }>).reduce((n, u) => {
    const msgs = Array.isArray(u?.messages) ? u.messages : u?.messages ? [u.messages] : [];
    return n + msgs.filter((m: { getType?: () => string }) => m?.getType?.() === "tool").length;
  }, 0);

interface Mark {
  turn: number;
  ms: number;
  bytes: number;
}

/** Runs `turns` turns and records time and stored bytes at every turn. */
async function run(agent: AgentName, turns: number, kind: Kind) {
  const ws = workspace(turns);
  const file = path.join(ws, "bench.db");
  const s = saver(kind, file);
  const r = buildAgent(agent, turns, s, ws, "bench");
  const marks: Mark[] = [{ turn: 0, ms: 0, bytes: storedBytes(s) }];
  const start = performance.now();
  let turn = 0;
  for await (const chunk of await r.stream()) {
    const n = toolMessagesIn(chunk);
    if (n) {
      turn += n;
      marks.push({
        turn,
        ms: performance.now() - start,
        bytes: kind === "sqlite" ? storedBytes(s) : NaN,
      });
    }
  }
  if (turn !== turns) throw new Error(`${agent} ran ${turn} turns, expected ${turns}`);
  return { marks, file, ws };
}

/**
 * ms and KB per turn over the ten turns ending at `t`, and KB per turn amortised over the last
 * quarter of the turns (delta channels write a full snapshot every 100 updates; a 10-turn window
 * that holds one looks worse than the average, one that does not looks better).
 */
function window(marks: Mark[], t: number) {
  const at = (turn: number) => marks.find((m) => m.turn === turn)!;
  const end = at(t);
  const begin = at(Math.max(0, t - 10));
  const wide = at(Math.max(0, t - Math.max(10, Math.floor(t / 4))));
  const n = end.turn - begin.turn;
  return {
    msPerTurn: ms((end.ms - begin.ms) / n),
    kbPerTurn: ms((end.bytes - begin.bytes) / n / 1024),
    kbPerTurnAmortized: ms((end.bytes - wide.bytes) / (end.turn - wide.turn) / 1024),
  };
}

/** Median ms per turn over many fresh 10-turn runs (SQLite): the short-run cost, less noisy than one run. */
async function shortRuns(agent: AgentName, reps = 30): Promise<number> {
  const ws = workspace(10);
  const times: number[] = [];
  for (let rep = 0; rep < reps + 5; rep++) {
    const r = buildAgent(
      agent,
      10,
      SqliteSaver.fromConnString(path.join(ws, `short-${rep}.db`)),
      ws,
      "short",
    );
    const t0 = performance.now();
    for await (const chunk of await r.stream()) void chunk;
    if (rep >= 5) times.push((performance.now() - t0) / 10);
  }
  return ms(times.sort((x, y) => x - y)[Math.floor(times.length / 2)]!);
}

async function loadTime(agent: AgentName, turns: number): Promise<number> {
  const { file, ws } = await run(agent, turns, "sqlite");
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const fresh = SqliteSaver.fromConnString(file);
    const r = buildAgent(agent, turns, fresh, ws, "bench");
    const t0 = performance.now();
    await r.getState();
    times.push(performance.now() - t0);
  }
  return ms(times.sort((a, b) => a - b)[1]!);
}

async function main() {
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    node: process.version,
    quick,
  };
  const turnRows: Array<Record<string, string | number>> = [];
  const perAgent: Record<string, unknown> = {};
  const longest = TURNS[TURNS.length - 1]!;
  // Warm every agent up first: the first run of a process pays for JIT compilation and module init.
  for (const agent of AGENTS) await run(agent, 30, "memory");
  for (const agent of AGENTS) {
    const entry: Record<string, unknown> = {};
    for (const kind of ["memory", "sqlite"] as const) {
      process.stderr.write(`${agent} / ${kind}: ${longest} turns…\n`);
      const { marks } = await run(agent, longest, kind);
      entry[kind] = Object.fromEntries(TURNS.map((t) => [t, window(marks, t)]));
      for (const t of TURNS)
        turnRows.push({ agent, checkpointer: kind, turn: t, ...window(marks, t) });
    }
    const loads: Record<number, number> = {};
    for (const n of LOADS) {
      process.stderr.write(`${agent}: load state after ${n} turns…\n`);
      loads[n] = await loadTime(agent, n);
    }
    entry.loadStateMs = loads;
    process.stderr.write(`${agent}: 10-turn runs…\n`);
    entry.shortRunMsPerTurn = await shortRuns(agent, quick ? 10 : 30);
    perAgent[agent] = entry;
  }
  results.agents = perAgent;
  const at = (agent: string, kind: string, t: number) =>
    (perAgent[agent] as Record<string, Record<number, ReturnType<typeof window>>>)[kind]![t]!;
  const first = TURNS[0]!;
  const short = (agent: string) =>
    (perAgent[agent] as { shortRunMsPerTurn: number }).shortRunMsPerTurn;
  results.ratios = {
    ["keel / prebuilt ReAct, ms per turn on 10-turn runs (median, sqlite)"]: ms(
      short("keel") / short("prebuilt ReAct"),
    ),
    ["keel / createAgent, ms per turn on 10-turn runs (median, sqlite)"]: ms(
      short("keel") / short("createAgent"),
    ),
    [`keel / prebuilt ReAct, ms per turn at ${first} turns (sqlite)`]: ms(
      at("keel", "sqlite", first).msPerTurn / at("prebuilt ReAct", "sqlite", first).msPerTurn,
    ),
    [`keel / createAgent, ms per turn at ${first} turns (sqlite)`]: ms(
      at("keel", "sqlite", first).msPerTurn / at("createAgent", "sqlite", first).msPerTurn,
    ),
    [`keel ms per turn at ${longest} / at ${first} (sqlite)`]: ms(
      at("keel", "sqlite", longest).msPerTurn / at("keel", "sqlite", first).msPerTurn,
    ),
    [`keel KB per turn at ${longest} (sqlite, 10-turn window)`]: at("keel", "sqlite", longest)
      .kbPerTurn,
    [`keel KB per turn at ${longest} (sqlite, amortised)`]: at("keel", "sqlite", longest)
      .kbPerTurnAmortized,
    [`prebuilt ReAct KB per turn at ${longest} (sqlite, amortised)`]: at(
      "prebuilt ReAct",
      "sqlite",
      longest,
    ).kbPerTurnAmortized,
  };
  console.log("\nPer turn (10-turn windows ending at the turn shown)");
  console.table(turnRows);
  console.log("Load a thread's state (ms, median of 3)");
  console.table(
    Object.fromEntries(
      AGENTS.map((a) => [a, (perAgent[a] as { loadStateMs: Record<number, number> }).loadStateMs]),
    ),
  );

  process.stderr.write("analyst on the 320-file fixture…\n");
  results.analyst = await benchAnalyst();
  console.log("Analyst (fixture repository, fake Ollama over HTTP)");
  console.table(results.analyst);

  results.parsers = benchParsers();
  console.log("Text tool-call parsing (calls per second)");
  console.table(results.parsers);
  console.log("Ratios");
  console.table(results.ratios);

  const out = path.join(import.meta.dirname, "results.json");
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`written ${out}`);
}

await main();
