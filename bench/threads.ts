/**
 * Long threads, in pieces: `npm run bench -- --agents keel,react --turns 10,300,1000` runs only
 * the agents and thread lengths named (keel alone, any peer, any list of lengths) on SQLite —
 * keel on its own saver, the peers on LangGraph's SqliteSaver — and reports per length: ms per
 * turn over the first and the last ten turns, KB written per turn (last ten, and amortised over
 * the last quarter), and the time a fresh saver and graph take to load the thread (what a resume
 * pays; the threads of one length loaded in turns).
 * keel runs with and without a 6 KB AGENTS.md. Bytes are counted as they are written (keel's
 * saver counts them; for a peer, only the rows added since the last turn are read), never by
 * re-reading the database.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { KeelSqliteSaver } from "../src/persistence/sqlite-saver.js";
import { buildAgent, type AgentName } from "./agents.js";
import { benchTemp } from "./temp.js";

/** Names accepted by `--agents`. */
const ALIASES: Record<string, AgentName> = {
  keel: "keel",
  react: "prebuilt ReAct",
  "prebuilt-react": "prebuilt ReAct",
  createagent: "createAgent",
  "create-agent": "createAgent",
};

export interface ThreadOptions {
  agents: AgentName[];
  turns: number[];
  /** The lengths the peers run (default: `turns`); a peer's 1,000-turn thread writes about 1 GB. */
  peerTurns: number[];
  /** Runs per agent and length; ms figures are the median over them (bytes do not vary). */
  runs: number;
  /** Fresh 10-turn runs per agent for the short-run comparison (0: skip it). */
  shortRuns: number;
}

/** `--agents a,b --turns 10,300 [--peer-turns 10] --runs 3 --short 20`; throws naming what it accepts. */
export function parseThreadArgs(argv: string[]): ThreadOptions | undefined {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const agents = value("--agents");
  const turns = value("--turns");
  if (agents === undefined && turns === undefined) return undefined;
  const names = (agents ?? "keel,react,createAgent").split(",").map((a) => {
    const name = ALIASES[a.trim().toLowerCase()];
    if (!name) throw new Error(`unknown agent "${a}": use ${Object.keys(ALIASES).join(", ")}`);
    return name;
  });
  const list = (flag: string, text: string) =>
    text.split(",").map((t) => {
      const n = Number(t);
      if (!Number.isInteger(n) || n < 10) throw new Error(`${flag} takes lengths ≥ 10, got "${t}"`);
      return n;
    });
  const lengths = list("--turns", turns ?? "10,300");
  const peerTurns = value("--peer-turns");
  const count = (flag: string, fallback: number) => {
    const n = Number(value(flag) ?? fallback);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} takes a count, got ${value(flag)}`);
    return n;
  };
  return {
    agents: [...new Set(names)],
    turns: lengths,
    peerTurns: peerTurns === undefined ? lengths : list("--peer-turns", peerTurns),
    runs: Math.max(1, count("--runs", 3)),
    shortRuns: count("--short", 20),
  };
}

/** A 6 KB AGENTS.md. */
const AGENTS_MD = Array.from(
  { length: 120 },
  (_, i) => `- rule ${String(i).padStart(3, "0")}: keep functions short and name things well`,
).join("\n");

/** A fresh workspace of `files` notes (notes/n0.txt …) for the scripted model to read, one a turn. */
export function notesWorkspace(files: number, agentsMd = false): string {
  const dir = benchTemp("keel-bench-");
  mkdirSync(path.join(dir, "notes"));
  for (let i = 0; i < files; i++)
    writeFileSync(path.join(dir, `notes/n${i}.txt`), `note ${i}\n`.repeat(20));
  if (agentsMd) writeFileSync(path.join(dir, "AGENTS.md"), AGENTS_MD);
  return dir;
}

/** Closes a saver's database file (both savers hold one as `db`). */
export function closeSaver(saver: BaseCheckpointSaver): void {
  (saver as { db?: { close(): void } }).db?.close();
}

/** The saver an agent runs on: keel's own, LangGraph's SqliteSaver for the peers. */
export function sqliteSaverFor(agent: AgentName, file: string): BaseCheckpointSaver {
  return agent === "keel" ? new KeelSqliteSaver(file) : SqliteSaver.fromConnString(file);
}

/**
 * Bytes a saver has stored so far, without re-reading what it stored before: keel's saver counts
 * them; for SqliteSaver only the rows added since the last call are summed (by rowid).
 */
export function byteCounter(saver: BaseCheckpointSaver): () => number {
  if (saver instanceof KeelSqliteSaver) return () => saver.bytesWritten;
  const db = (saver as SqliteSaver).db;
  let total = 0;
  const last = { checkpoints: 0, writes: 0 };
  const sums = {
    checkpoints: "coalesce(sum(length(checkpoint) + length(metadata)), 0)",
    writes: "coalesce(sum(length(value)), 0)",
  };
  return () => {
    for (const table of ["checkpoints", "writes"] as const) {
      let row: { n: number; top: number | null };
      try {
        row = db
          .prepare(`SELECT ${sums[table]} AS n, max(rowid) AS top FROM ${table} WHERE rowid > ?`)
          .get(last[table]) as { n: number; top: number | null };
      } catch {
        continue; // the saver creates its tables on first use
      }
      total += row.n;
      if (row.top !== null) last[table] = row.top;
    }
    return total;
  };
}

const isTurn = (chunk: unknown) =>
  Object.values((chunk ?? {}) as Record<string, { messages?: unknown }>).reduce((n, u) => {
    const msgs = Array.isArray(u?.messages) ? u.messages : u?.messages ? [u.messages] : [];
    return n + msgs.filter((m: { getType?: () => string }) => m?.getType?.() === "tool").length;
  }, 0);

/** One thread: ms and bytes after every turn (measuring excluded), and its file to load again. */
async function thread(agent: AgentName, turns: number, agentsMd: boolean) {
  const ws = notesWorkspace(turns, agentsMd);
  const file = path.join(ws, "bench.db");
  const saver = sqliteSaverFor(agent, file);
  const bytes = byteCounter(saver);
  const r = buildAgent(agent, turns, saver, ws, "bench");
  const ms = [0];
  const stored = [bytes()];
  let paused = 0;
  const start = performance.now();
  for await (const chunk of await r.stream()) {
    const n = isTurn(chunk);
    if (!n) continue;
    const now = performance.now();
    for (let i = 0; i < n; i++) {
      ms.push(now - start - paused);
      stored.push(bytes());
    }
    paused += performance.now() - now;
  }
  closeSaver(saver);
  if (ms.length !== turns + 1) throw new Error(`${agent} ran ${ms.length - 1} turns, not ${turns}`);
  return { ms, stored, ws, file };
}

/** A loaded thread's agent, length and file. */
interface Stored {
  row: ThreadRow;
  ws: string;
  file: string;
}

/** Ms a fresh saver (and graph) takes to load a thread's state (graph.getState): what a resume pays. */
async function loadOnce(agent: AgentName, turns: number, ws: string, file: string) {
  const saver = sqliteSaverFor(agent, file);
  const r = buildAgent(agent, turns, saver, ws, "bench");
  const t0 = performance.now();
  await r.getState();
  const ms = performance.now() - t0;
  closeSaver(saver);
  return ms;
}

/**
 * Each thread's load time, the threads of one length taking turns load by load (as `shortRuns`
 * does with runs), so that no agent is measured in a colder process than another: five rounds
 * discarded (the first loads of a process compile the code paths of loading), then the median of
 * fifteen. A 10-turn load takes a millisecond or two, where one cold load is several.
 */
async function loadTimes(stored: Stored[]) {
  for (const turns of new Set(stored.map((s) => s.row.turns))) {
    const group = stored.filter((s) => s.row.turns === turns);
    const times = group.map(() => [] as number[]);
    for (let pass = 0; pass < 20; pass++)
      for (const [i, s] of group.entries()) {
        const ms = await loadOnce(s.row.agent, turns, s.ws, s.file);
        if (pass >= 5) times[i]!.push(ms);
      }
    group.forEach((s, i) => (s.row.loadMs = round(median(times[i]!))));
  }
}

/** The middle value of `xs` (the upper middle of an even count). */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** `n` to two decimals, as the benches print milliseconds and kilobytes. */
export const round = (n: number) => Math.round(n * 100) / 100;
/** Per-turn ms of turns (from, to]: the mean, and the median single turn. */
const span = (ms: number[], from: number, to: number) => {
  const each = ms.slice(from + 1, to + 1).map((t, i) => t - ms[from + i]!);
  return { mean: (ms[to]! - ms[from]!) / (to - from), median: median(each) };
};

export interface ThreadRow {
  agent: AgentName;
  agentsMd: boolean;
  turns: number;
  msFirst10: number;
  msLast10: number;
  msFirst10Median: number;
  msLast10Median: number;
  /** Median turn of turns 11–60 and of the last fifty (threads of 110 turns and more): less noise than ten. */
  msEarly50Median?: number;
  msLast50Median?: number;
  kbPerTurnLast10: number;
  kbPerTurnLastQuarter: number;
  loadMs: number;
}

/** Every agent × length (× AGENTS.md for keel), each length `runs` times. */
async function lengths(o: ThreadOptions): Promise<ThreadRow[]> {
  const stored: Stored[] = [];
  for (const agent of o.agents) {
    await thread(agent, Math.min(100, Math.max(...o.turns)), false); // warm-up (JIT)
    for (const agentsMd of agent === "keel" ? [false, true] : [false])
      for (const turns of agent === "keel" ? o.turns : o.peerTurns) {
        process.stderr.write(
          `${agent}${agentsMd ? " + AGENTS.md" : ""}: ${o.runs} × ${turns} turns…\n`,
        );
        const runs = [];
        for (let i = 0; i < o.runs; i++) runs.push(await thread(agent, turns, agentsMd));
        const last = runs[runs.length - 1]!;
        const quarter = turns - Math.max(10, Math.floor(turns / 4));
        const first = runs.map((r) => span(r.ms, 0, 10));
        const end = runs.map((r) => span(r.ms, turns - 10, turns));
        const row: ThreadRow = {
          agent,
          agentsMd,
          turns,
          msFirst10: round(median(first.map((s) => s.mean))),
          msLast10: round(median(end.map((s) => s.mean))),
          msFirst10Median: round(median(first.map((s) => s.median))),
          msLast10Median: round(median(end.map((s) => s.median))),
          ...(turns >= 110
            ? {
                msEarly50Median: round(median(runs.map((r) => span(r.ms, 10, 60).median))),
                msLast50Median: round(
                  median(runs.map((r) => span(r.ms, turns - 50, turns).median)),
                ),
              }
            : {}),
          kbPerTurnLast10: round((last.stored[turns]! - last.stored[turns - 10]!) / 10 / 1024),
          kbPerTurnLastQuarter: round(
            (last.stored[turns]! - last.stored[quarter]!) / (turns - quarter) / 1024,
          ),
          loadMs: 0,
        };
        stored.push({ row, ws: last.ws, file: last.file });
      }
  }
  process.stderr.write("loading each thread in a fresh saver…\n");
  await loadTimes(stored);
  return stored.map((s) => s.row);
}

/** Median ms per turn over fresh 10-turn runs, the agents taking turns run by run (5 discarded). */
async function shortRuns(agents: AgentName[], reps: number) {
  const times = new Map<AgentName, number[]>(agents.map((a) => [a, []]));
  for (let rep = 0; rep < reps + 5; rep++)
    for (const agent of agents) {
      const { ms } = await thread(agent, 10, false);
      if (rep >= 5) times.get(agent)!.push(ms[10]! / 10);
    }
  return Object.fromEntries(agents.map((a) => [a, round(median(times.get(a)!))]));
}

/** The ratios the targets are stated in (bench/README.md), where the run has what they need. */
function ratios(rows: ThreadRow[], short: Record<string, number>) {
  const out: Record<string, number> = {};
  const keel = (md: boolean) => rows.filter((r) => r.agent === "keel" && r.agentsMd === md);
  // Turn 1,000 against turn 10 of the same thread: the median turn of the last ten over the median
  // turn of the first ten (a separate 10-turn thread is one more sample of start-up noise).
  for (const md of [false, true])
    for (const r of keel(md).filter((k) => k.turns > 10))
      out[
        `keel${md ? " + AGENTS.md" : ""}: ms per turn, last 10 / first 10 of ${r.turns} (median turn)`
      ] = round(r.msLast10Median / r.msFirst10Median);
  // The same over fifty turns: on a noisy machine a median of ten moves by half between runs.
  for (const md of [false, true])
    for (const r of keel(md).filter((k) => k.msLast50Median !== undefined))
      out[
        `keel${md ? " + AGENTS.md" : ""}: ms per turn, last 50 / turns 11–60 of ${r.turns} (median turn)`
      ] = round(r.msLast50Median! / r.msEarly50Median!);
  for (const r of keel(false)) {
    const peers = rows.filter((p) => p.agent !== "keel" && p.turns === r.turns);
    if (peers.length)
      out[`keel load / best peer's load at ${r.turns} turns`] = round(
        r.loadMs / Math.min(...peers.map((p) => p.loadMs)),
      );
  }
  if (short.keel !== undefined && short["prebuilt ReAct"] !== undefined)
    out["keel / prebuilt ReAct, ms per turn on 10-turn runs"] = round(
      short.keel / short["prebuilt ReAct"],
    );
  return out;
}

/** Runs the pieces asked for; prints the tables and writes bench/results-threads.json. */
export async function benchThreads(o: ThreadOptions) {
  const rows = await lengths(o);
  const short = o.shortRuns ? await shortRuns(o.agents, o.shortRuns) : {};
  const result = { date: new Date().toISOString(), node: process.version, options: o, rows, short };
  console.log("Threads on SQLite (ms per turn: mean and median turn of ten; KB written per turn)");
  console.table(rows);
  if (o.shortRuns) {
    console.log("10-turn runs, ms per turn (median, the agents taking turns)");
    console.table(short);
  }
  const r = ratios(rows, short);
  console.log("Ratios");
  console.table(r);
  const out = path.join(import.meta.dirname, "results-threads.json");
  writeFileSync(out, `${JSON.stringify({ ...result, ratios: r }, null, 2)}\n`);
  console.log(`written ${out}`);
}
