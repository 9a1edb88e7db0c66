/**
 * `npm run bench`: keel's overhead next to the prebuilt agents, checkpoint growth, resume cost, the
 * analyst's throughput and the text tool-call parser. Prints a table and writes bench/results.json.
 * Figures and ratios only — machines are shared and noisy, so nothing here is a pass/fail test.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { AGENTS, buildAgent, type AgentName } from "./agents.js";
import { benchAnalyst } from "./analyst.js";
import { benchParsers } from "./parsers.js";
import { benchParserScale } from "./parser-scale.js";
import { benchTokenEstimate } from "./token-estimate.js";
import { benchUndo } from "./undo.js";
import { benchPrefill, PREFILL_LENGTHS } from "./prefill.js";
import {
  benchThreads,
  byteCounter,
  median,
  notesWorkspace,
  parseThreadArgs,
  sqliteSaverFor,
} from "./threads.js";

const quick = process.argv.includes("--quick");
const TURNS = quick ? [10, 50] : [10, 100, 300];
const LOADS = quick ? [10, 100] : [10, 300, 1000];
/** Long runs per agent and checkpointer; each window's figure is the median over them. */
const LONG_RUNS = quick ? 1 : 5;
const ms = (n: number) => Math.round(n * 100) / 100;

type Kind = "memory" | "sqlite";
/** The checkpointer for a run: keel on its own SQLite saver, the peers on LangGraph's. */
function saver(kind: Kind, file: string, agent: AgentName): BaseCheckpointSaver {
  return kind === "memory" ? new MemorySaver() : sqliteSaverFor(agent, file);
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
  const ws = notesWorkspace(turns);
  const file = path.join(ws, "bench.db");
  const s = saver(kind, file, agent);
  const storedBytes = kind === "sqlite" ? byteCounter(s) : () => NaN;
  const r = buildAgent(agent, turns, s, ws, "bench");
  const marks: Mark[] = [{ turn: 0, ms: 0, bytes: storedBytes() }];
  const start = performance.now();
  let turn = 0;
  for await (const chunk of await r.stream()) {
    const n = toolMessagesIn(chunk);
    if (n) {
      turn += n;
      marks.push({
        turn,
        ms: performance.now() - start,
        bytes: storedBytes(),
      });
    }
  }
  if (turn !== turns) throw new Error(`${agent} ran ${turn} turns, expected ${turns}`);
  return { marks, file, ws };
}

/**
 * ms and KB per turn over the ten turns ending at `t` (the mean, and the median turn — one garbage
 * collection pause in a window moves the mean, not the median), and KB per turn amortised over the
 * last quarter of the turns (delta channels write a full snapshot every 100 updates; a 10-turn
 * window that holds one looks worse than the average, one that does not looks better).
 */
function window(marks: Mark[], t: number) {
  const at = (turn: number) => marks.findIndex((m) => m.turn === turn);
  const end = marks[at(t)]!;
  const begin = marks[at(Math.max(0, t - 10))]!;
  const wide = marks[at(Math.max(0, t - Math.max(10, Math.floor(t / 4))))]!;
  const n = end.turn - begin.turn;
  const turns = marks.slice(at(begin.turn) + 1, at(t) + 1).map((m, i, all) => {
    const previous = i === 0 ? begin : all[i - 1]!;
    return (m.ms - previous.ms) / (m.turn - previous.turn);
  });
  return {
    msPerTurn: ms((end.ms - begin.ms) / n),
    msPerTurnMedian: ms(median(turns)),
    kbPerTurn: ms((end.bytes - begin.bytes) / n / 1024),
    kbPerTurnAmortized: ms((end.bytes - wide.bytes) / (end.turn - wide.turn) / 1024),
  };
}

/** A window's figures, each the median over several runs of the same length (bytes do not vary). */
function acrossRuns(runs: Mark[][], t: number): ReturnType<typeof window> {
  const each = runs.map((marks) => window(marks, t));
  return {
    msPerTurn: median(each.map((w) => w.msPerTurn)),
    msPerTurnMedian: median(each.map((w) => w.msPerTurnMedian)),
    kbPerTurn: each[0]!.kbPerTurn,
    kbPerTurnAmortized: each[0]!.kbPerTurnAmortized,
  };
}

/**
 * Median ms per turn over many fresh 10-turn runs: the short-run cost. The agents take turns run
 * by run (keel, createAgent, ReAct, keel, …) so a slow spell of this shared machine hits all of
 * them alike, and the first five rounds are discarded (JIT).
 */
async function shortRuns(kind: Kind, reps: number): Promise<Record<AgentName, number>> {
  const ws = notesWorkspace(10);
  const times = Object.fromEntries(AGENTS.map((a) => [a, [] as number[]])) as Record<
    AgentName,
    number[]
  >;
  for (let rep = 0; rep < reps + 5; rep++) {
    for (const agent of AGENTS) {
      const file = path.join(ws, `short-${agent}-${rep}.db`);
      const r = buildAgent(agent, 10, saver(kind, file, agent), ws, "short");
      const t0 = performance.now();
      for await (const chunk of await r.stream()) void chunk;
      if (rep >= 5) times[agent].push((performance.now() - t0) / 10);
    }
  }
  return Object.fromEntries(AGENTS.map((a) => [a, ms(median(times[a]))])) as Record<
    AgentName,
    number
  >;
}

/** Builds a thread of `turns` turns (SQLite), then times loading its state; also gives its last ten turns. */
async function loadTime(agent: AgentName, turns: number) {
  const { file, ws, marks } = await run(agent, turns, "sqlite");
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const fresh = sqliteSaverFor(agent, file);
    const r = buildAgent(agent, turns, fresh, ws, "bench");
    const t0 = performance.now();
    await r.getState();
    times.push(performance.now() - t0);
  }
  return { loadMs: ms(median(times)), lastTurns: window(marks, turns) };
}

async function main() {
  const pieces = parseThreadArgs(process.argv.slice(2));
  if (pieces) return benchThreads(pieces);
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    node: process.version,
    quick,
  };
  const turnRows: Array<Record<string, string | number>> = [];
  const perAgent: Record<string, unknown> = {};
  const longest = TURNS[TURNS.length - 1]!;
  // Warm every agent up first, as long as the longest run: the first run of a process pays for JIT
  // compilation and module init, and a long thread takes code paths a short one never reaches.
  for (const agent of AGENTS) await run(agent, longest, "memory");
  for (const agent of AGENTS) {
    const entry: Record<string, unknown> = {};
    for (const kind of ["memory", "sqlite"] as const) {
      process.stderr.write(`${agent} / ${kind}: ${LONG_RUNS} × ${longest} turns…\n`);
      const runs: Mark[][] = [];
      for (let i = 0; i < LONG_RUNS; i++) runs.push((await run(agent, longest, kind)).marks);
      const windows = Object.fromEntries(TURNS.map((t) => [t, acrossRuns(runs, t)]));
      entry[kind] = windows;
      for (const t of TURNS) turnRows.push({ agent, checkpointer: kind, turn: t, ...windows[t] });
    }
    const loads: Record<number, number> = {};
    const ends: Record<number, number> = {};
    for (const n of LOADS) {
      process.stderr.write(`${agent}: load state after ${n} turns…\n`);
      const { loadMs, lastTurns } = await loadTime(agent, n);
      loads[n] = loadMs;
      ends[n] = lastTurns.msPerTurnMedian;
    }
    entry.loadStateMs = loads;
    entry.medianTurnAtThreadEndMs = ends;
    perAgent[agent] = entry;
  }
  const shortRun: Record<Kind, Record<AgentName, number>> = {} as never;
  for (const kind of ["memory", "sqlite"] as const) {
    process.stderr.write(`10-turn runs, ${kind}, the agents taking turns…\n`);
    shortRun[kind] = await shortRuns(kind, quick ? 10 : 40);
  }
  results.agents = perAgent;
  results.shortRunMsPerTurn = shortRun;
  const at = (agent: string, kind: string, t: number) =>
    (perAgent[agent] as Record<string, Record<number, ReturnType<typeof window>>>)[kind]![t]!;
  const first = TURNS[0]!;
  const endTurn = (agent: string, n: number) =>
    (perAgent[agent] as { medianTurnAtThreadEndMs: Record<number, number> })
      .medianTurnAtThreadEndMs[n]!;
  const shortRatios = Object.fromEntries(
    (["memory", "sqlite"] as const).flatMap((kind) =>
      (["prebuilt ReAct", "createAgent"] as const).map((peer) => [
        `keel / ${peer}, ms per turn on 10-turn runs (median, ${kind})`,
        ms(shortRun[kind].keel / shortRun[kind][peer]),
      ]),
    ),
  );
  results.ratios = {
    ...shortRatios,
    [`keel / prebuilt ReAct, ms per turn at ${first} turns (sqlite)`]: ms(
      at("keel", "sqlite", first).msPerTurn / at("prebuilt ReAct", "sqlite", first).msPerTurn,
    ),
    [`keel / createAgent, ms per turn at ${first} turns (sqlite)`]: ms(
      at("keel", "sqlite", first).msPerTurn / at("createAgent", "sqlite", first).msPerTurn,
    ),
    [`keel ms per turn at ${longest} / at ${first} (sqlite, 10-turn windows)`]: ms(
      at("keel", "sqlite", longest).msPerTurn / at("keel", "sqlite", first).msPerTurn,
    ),
    [`keel ms per turn at ${longest} / at ${first} (sqlite, median turn of each window)`]: ms(
      at("keel", "sqlite", longest).msPerTurnMedian / at("keel", "sqlite", first).msPerTurnMedian,
    ),
    [`keel ms per turn at ${longest} / at ${first} (memory, median turn of each window)`]: ms(
      at("keel", "memory", longest).msPerTurnMedian / at("keel", "memory", first).msPerTurnMedian,
    ),
    [`keel ms per turn at ${LOADS.at(-1)} / at ${LOADS.at(-2)} turns (sqlite, median of the last ten)`]:
      ms(endTurn("keel", LOADS.at(-1)!) / endTurn("keel", LOADS.at(-2)!)),
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
  console.log("10-turn runs (ms per turn, median, the agents taking turns)");
  console.table(shortRun);
  console.log("Load a thread's state (ms, median of 3)");
  console.table(
    Object.fromEntries(
      AGENTS.map((a) => [a, (perAgent[a] as { loadStateMs: Record<number, number> }).loadStateMs]),
    ),
  );
  console.log("The median of the last ten turns of those threads (ms, sqlite)");
  console.table(
    Object.fromEntries(
      AGENTS.map((a) => [
        a,
        (perAgent[a] as { medianTurnAtThreadEndMs: Record<number, number> })
          .medianTurnAtThreadEndMs,
      ]),
    ),
  );

  process.stderr.write("analyst on the 320-file fixture…\n");
  results.analyst = await benchAnalyst();
  console.log("Analyst (fixture repository, fake Ollama over HTTP)");
  console.table(results.analyst);

  const modelTime = await benchPrefill(quick ? [10, 80] : PREFILL_LENGTHS);
  results.modelTime = modelTime;
  console.log(
    "Model time per task (fake Ollama's prefill model: one KV-cache slot, context 8,192; seconds simulated for",
    `${Object.values(modelTime.machines)
      .map(
        (m) =>
          `${m.name}: prefill ${m.prefillTokensPerSec} tok/s, generation ${m.generateTokensPerSec} tok/s`,
      )
      .join("; ")})`,
  );
  console.table(modelTime.rows);
  console.log("Model time: keel against the peers and against the limit");
  console.table(modelTime.checks);

  results.parsers = benchParsers();
  console.log("Text tool-call parsing (parses per second: the sample, the corpus cases)");
  console.table(results.parsers);
  results.parserScale = benchParserScale();
  console.log("Text tool-call parsing by reply size (CPU ms; 1 MB / 100 KB near 10 is linear)");
  console.table(results.parserScale);
  results.tokenEstimate = benchTokenEstimate();
  console.table(results.tokenEstimate);
  results.undo = await benchUndo(quick ? [100] : [100, 2000]);
  console.log("Undo snapshots per changing step (ms, median): none, a file tool's, a command's");
  console.table(results.undo);
  console.log("Ratios");
  console.table(results.ratios);

  const out = path.join(import.meta.dirname, "results.json");
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`written ${out}`);
}

await main();
