/** A distributed run's progress from the queue's census: done, in flight, failed, per worker, rate, ETA. Pure. */
import type { CensusRow } from "./queue.js";

export interface RunStatus {
  run: string;
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

/** Folds census rows into one status per run (most units first). */
export function runStatuses(rows: CensusRow[], now: number): RunStatus[] {
  const runs = new Map<string, RunStatus & { first?: number }>();
  for (const r of rows) {
    const s = runs.get(r.run) ?? {
      run: r.run,
      total: 0,
      done: 0,
      inFlight: 0,
      queued: 0,
      failed: 0,
      perWorker: {},
      unitsPerSecond: null,
      etaSeconds: null,
    };
    runs.set(r.run, s);
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
  return [...runs.values()]
    .map(({ first, ...s }) => {
      const seconds = first !== undefined ? (now - first) / 1000 : 0;
      const rate = s.done > 0 && seconds > 0 ? s.done / seconds : null;
      const left = s.queued + s.inFlight;
      return {
        ...s,
        unitsPerSecond: rate,
        etaSeconds: rate ? (left === 0 ? 0 : left / rate) : null,
      };
    })
    .sort((a, b) => b.total - a.total);
}

const dur = (s: number) =>
  s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`
      : `${Math.round(s)}s`;

/** One line of a run's progress (the progress bar's tail and `--status`). */
export function formatStatusLine(s: RunStatus): string {
  const workers = Object.entries(s.perWorker)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([w, n]) => `${w}:${n}`)
    .join(" ");
  return [
    `${s.done}/${s.total} done`,
    `${s.inFlight} in flight`,
    `${s.queued} queued`,
    `${s.failed} failed`,
    s.unitsPerSecond !== null ? `${s.unitsPerSecond.toFixed(2)} units/s` : "– units/s",
    s.etaSeconds !== null ? `eta ${dur(s.etaSeconds)}` : "eta –",
    workers ? `workers ${workers}` : "",
  ]
    .filter(Boolean)
    .join(" | ");
}
