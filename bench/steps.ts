/**
 * Where a short run's time goes, per agent: each node's wall time per turn, and what is left of
 * the run's wall time (LangGraph's supersteps, the checkpoint writes, the stream). The same fresh
 * 10-turn runs as the bench's short-run comparison (SQLite, the agents taking turns run by run,
 * five rounds discarded), each watched once — a callback handler times each of the graph's nodes,
 * the saver's writes are timed — and run once more unwatched, so the "keel / ReAct per turn" ratio
 * comes with the parts that make it, side by side in one run. The peers also run at keel's
 * durability ("sync": each step on disk before the next, where LangGraph's default lets the write
 * overlap the next step), so what keel's guarantee costs is apart from what its nodes cost. The
 * handler costs time itself (every runnable's start and end reach it): read the watched figures as
 * shares, the unwatched ones as the ratio.
 *
 *   npm run bench:steps [-- --runs 40]
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { AGENTS, buildAgent, type AgentName } from "./agents.js";
import { option } from "./args.js";
import { closeSaver, median, notesWorkspace, round, sqliteSaverFor } from "./threads.js";

const TURNS = 10;
/** The saver's part of a run (its writes happen between the nodes, as LangGraph's steps end). */
const WRITES = "(checkpoint writes: put, putWrites)";
/** The run's wall time less its nodes' and its writes'. */
const REST = "(the rest: LangGraph's supersteps, the stream)";

/** Times the graph's own nodes: the runs whose parent is the graph's run. */
class NodeTimer extends BaseCallbackHandler {
  name = "keel-bench-node-timer";
  override awaitHandlers = true; // timestamps when it happens, not when a queue gets to it
  private root: string | undefined;
  private started = new Map<string, { node: string; at: number }>();
  readonly ms = new Map<string, number>();
  readonly count = new Map<string, number>();

  override handleChainStart(
    _chain: Serialized,
    _inputs: unknown,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ) {
    if (this.root === undefined && parentRunId === undefined) this.root = runId;
    else if (parentRunId === this.root && runName && runName !== "__start__")
      this.started.set(runId, { node: runName, at: performance.now() });
  }

  override handleChainEnd(_outputs: unknown, runId: string) {
    this.done(runId);
  }

  override handleChainError(_err: unknown, runId: string) {
    this.done(runId);
  }

  private done(runId: string) {
    const s = this.started.get(runId);
    if (!s) return;
    this.started.delete(runId);
    this.add(s.node, performance.now() - s.at);
  }

  add(part: string, ms: number) {
    this.ms.set(part, (this.ms.get(part) ?? 0) + ms);
    this.count.set(part, (this.count.get(part) ?? 0) + 1);
  }
}

/** Adds the time the saver's writes take (`put`, `putWrites`: serialising and storing) to `timer`. */
function timeWrites(saver: BaseCheckpointSaver, timer: NodeTimer) {
  for (const method of ["put", "putWrites"] as const) {
    const write = saver[method].bind(saver) as (...args: unknown[]) => Promise<unknown>;
    (saver as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      const at = performance.now();
      try {
        return await write(...args);
      } finally {
        timer.add(WRITES, performance.now() - at);
      }
    };
  }
}

/** What is run: an agent, and for a peer the durability it is given (keel always runs "sync"). */
interface Lane {
  label: string;
  agent: AgentName;
  peerDurability?: "sync";
}
const LANES: Lane[] = AGENTS.flatMap((agent): Lane[] =>
  agent === "keel"
    ? [{ label: agent, agent }]
    : [
        { label: agent, agent },
        { label: `${agent} (durability sync)`, agent, peerDurability: "sync" },
      ],
);

/** One run of a lane: its wall time, and its nodes' and writes' times when watched. */
async function once(lane: Lane, watch: boolean) {
  const ws = notesWorkspace(TURNS);
  const saver = sqliteSaverFor(lane.agent, path.join(ws, "steps.db"));
  const timer = new NodeTimer();
  if (watch) timeWrites(saver, timer);
  const run = buildAgent(lane.agent, TURNS, saver, ws, "steps", {
    ...(watch ? { callbacks: [timer] } : {}),
    ...(lane.peerDurability ? { peerDurability: lane.peerDurability } : {}),
  });
  const t0 = performance.now();
  for await (const chunk of await run.stream()) void chunk;
  const wall = performance.now() - t0;
  closeSaver(saver);
  return { wall, timer };
}

async function main() {
  const runs = Number(option("--runs") ?? 40);
  if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs takes a whole number ≥ 1");
  type Run = Awaited<ReturnType<typeof once>>;
  const seen = new Map(LANES.map((l) => [l, { watched: [] as Run[], plain: [] as number[] }]));
  for (let rep = 0; rep < runs + 5; rep++)
    for (const lane of LANES) {
      const [watched, plain] = [await once(lane, true), await once(lane, false)];
      if (rep < 5) continue;
      seen.get(lane)!.watched.push(watched);
      seen.get(lane)!.plain.push(plain.wall);
    }
  const rows: Record<string, string | number>[] = [];
  const plainMs = new Map<string, number>();
  for (const [lane, { watched, plain }] of seen) {
    const perTurn = (f: (r: Run) => number) => round(median(watched.map(f)) / TURNS);
    const parts = (r: Run) => [...r.timer.ms.values()].reduce((a, b) => a + b, 0);
    const row = (part: string, calls: number | string, ms: number) =>
      rows.push({ run: lane.label, part, calls, "ms a turn": ms });
    for (const part of new Set(watched.flatMap((r) => [...r.timer.ms.keys()])))
      row(
        part,
        median(watched.map((r) => r.timer.count.get(part) ?? 0)),
        perTurn((r) => r.timer.ms.get(part) ?? 0),
      );
    row(
      REST,
      "",
      perTurn((r) => r.wall - parts(r)),
    );
    row(
      "(the run, watched)",
      "",
      perTurn((r) => r.wall),
    );
    plainMs.set(lane.label, round(median(plain) / TURNS));
    row("(the run, not watched)", "", plainMs.get(lane.label)!);
  }
  console.log(`median of ${runs} fresh ${TURNS}-turn runs per lane (SQLite), ms per turn:`);
  console.table(rows);
  const keel = plainMs.get("keel")!;
  console.log("keel / each, not watched, ms per turn:");
  console.table(
    Object.fromEntries(
      [...plainMs].filter(([l]) => l !== "keel").map(([l, ms]) => [l, round(keel / ms)]),
    ),
  );
}

await main();
