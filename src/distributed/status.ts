/**
 * A distributed run's progress and its workers' health: done, in flight, queued, failed, per
 * worker, rate, ETA; each worker alive, stopped or gone, when last seen, its units, failures and
 * servers. Pure.
 */
import type { CensusRow, WorkerRow } from "./queue.js";

export interface RunStatus {
  run: string;
  /** The analysis (one listing of the target) these figures are of: the run's latest. */
  analysis: string;
  total: number;
  done: number;
  inFlight: number;
  queued: number;
  failed: number;
  /** Completed units per worker. */
  perWorker: Record<string, number>;
  /** Completed units per second since the run's first unit started; null before any. */
  unitsPerSecond: number | null;
  /** Seconds until the queued and running units are done at that rate; null without a rate. */
  etaSeconds: number | null;
}

type Tally = RunStatus & { first?: number; last: number };

const blank = (run: string, analysis: string): Tally => ({
  run,
  analysis,
  total: 0,
  done: 0,
  inFlight: 0,
  queued: 0,
  failed: 0,
  perWorker: {},
  unitsPerSecond: null,
  etaSeconds: null,
  last: 0,
});

/** Rate and ETA of a tally at `now`. */
export function withRate(s: RunStatus, first: number | undefined, now: number): RunStatus {
  const seconds = first !== undefined ? (now - first) / 1000 : 0;
  const rate = s.done > 0 && seconds > 0 ? s.done / seconds : null;
  const left = s.queued + s.inFlight;
  return { ...s, unitsPerSecond: rate, etaSeconds: rate ? (left === 0 ? 0 : left / rate) : null };
}

/** Folds census rows into one status per run, of its latest analysis (most units first). */
export function runStatuses(rows: CensusRow[], now: number): RunStatus[] {
  const analyses = new Map<string, Tally>();
  for (const r of rows) {
    const k = `${r.run}\n${r.analysis}`;
    const s = analyses.get(k) ?? blank(r.run, r.analysis);
    analyses.set(k, s);
    s.last = Math.max(s.last, r.lastActivity ?? 0);
    if (r.state === "cancelled") continue;
    s.total += r.count;
    if (r.state === "completed") {
      s.done += r.count;
      const w = r.worker ?? "?";
      s.perWorker[w] = (s.perWorker[w] ?? 0) + r.count;
    } else if (r.state === "failed") s.failed += r.count;
    else if (r.state === "active") s.inFlight += r.count;
    else s.queued += r.count;
    if (r.firstStart !== undefined) s.first = Math.min(s.first ?? Infinity, r.firstStart);
  }
  const latest = new Map<string, Tally>();
  for (const s of analyses.values())
    if ((latest.get(s.run)?.last ?? -1) < s.last) latest.set(s.run, s);
  return [...latest.values()]
    .map(({ first, last: _last, ...s }) => withRate(s, first, now))
    .sort((a, b) => b.total - a.total);
}

/** A duration as people read it: 42s, 3m05s, 2h07m. */
export const dur = (s: number) =>
  s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`
      : `${Math.round(s)}s`;

/** One line of a run's progress (the progress bar's tail and `--status`). */
export function formatStatusLine(s: RunStatus, workers: WorkerRow[] = []): string {
  const state = new Map(workers.map((w) => [w.name, w.state]));
  const per = Object.entries(s.perWorker)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([w, n]) => `${w}:${n}${state.get(w) === "gone" ? " (gone)" : ""}`)
    .join(" ");
  return [
    `${s.done}/${s.total} done`,
    `${s.inFlight} in flight`,
    `${s.queued} queued`,
    `${s.failed} failed`,
    s.unitsPerSecond !== null ? `${s.unitsPerSecond.toFixed(2)} units/s` : "– units/s",
    s.etaSeconds !== null ? `eta ${dur(s.etaSeconds)}` : "eta –",
    per ? `workers ${per}` : "",
  ]
    .filter(Boolean)
    .join(" | ");
}

/** One worker's health: `w1 (host:pid) alive, seen 2s ago, 12 units, 0 failures, servers …`. */
export function formatWorker(w: WorkerRow, now: number): string {
  const seen = Math.max(0, (now - w.lastSeen) / 1000);
  return `${w.name} (${w.host}:${w.pid}) ${w.state}, seen ${dur(seen)} ago, ${w.units} units, ${w.failures} failures, servers ${w.servers.join(" ")}`;
}
