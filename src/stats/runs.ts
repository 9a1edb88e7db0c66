/**
 * What keel stats counts, pure: the table per model × tool over many run records
 * (coder/learning/run-record.ts), and the filters that choose them.
 */
import type { LessonState } from "../coder/learning/lessons.js";
import type { RepairKind } from "../coder/call-tally.js";
import type { RunRecord } from "../coder/learning/run-record.js";
import type { Rung } from "../guard/ladder.js";
import type { ToolFailureKind } from "../tools/types.js";

export interface StatsFilter {
  model?: string;
  thread?: string;
  /** ISO bounds of `at`, inclusive. */
  since?: string;
  until?: string;
}

export function filterRuns(runs: readonly RunRecord[], f: StatsFilter): RunRecord[] {
  return runs.filter(
    (r) =>
      (!f.model || r.model === f.model) &&
      (!f.thread || r.thread === f.thread) &&
      (!f.since || r.at >= f.since) &&
      (!f.until || r.at <= f.until),
  );
}

/** The per-tool table's columns, the same in the terminal and on the HTML page. */
export const TOOL_COLUMNS = ["model", "tool", "calls", "failures", "repairs"] as const;

export interface ToolRow {
  model: string;
  tool: string;
  calls: number;
  failures: Partial<Record<ToolFailureKind, number>>;
  repairs: Partial<Record<RepairKind, number>>;
}

export interface ModelRow {
  model: string;
  runs: number;
  outcomes: Record<string, number>;
  calls: number;
  failures: number;
  repaired: number;
  salvaged: number;
  loopsCut: number;
  rungs: Partial<Record<Rung, number>>;
  promptTokens: number;
  generatedTokens: number;
  tokensPerSecond?: number;
}

export interface Stats {
  runs: number;
  threads: number;
  models: ModelRow[];
  tools: ToolRow[];
  /** The newest runs that stopped on an error and were not resumed, newest first, with the error. */
  stopped: Array<{ at: string; thread: string; model: string; error: string }>;
  /** Outcomes per day (UTC), for the chart over time. */
  days: Array<{ day: string; outcomes: Record<string, number> }>;
  /** Learned description lines per model, active or retired (coder/learning/lessons.ts). */
  lessons?: Array<LessonState & { model: string }>;
  /** keel eval reports in the store: when, which model, k, and pass^k per tool channel. */
  evals?: Array<{
    at: string;
    model: string;
    k: number;
    passK: Record<string, { tasks: number; passed: number }>;
  }>;
}

const bump = <K extends string>(rec: Partial<Record<K, number>>, key: K, by = 1) => {
  rec[key] = (rec[key] ?? 0) + by;
};

/** How many stopped runs the stats name. */
const STOPPED_SHOWN = 5;

/** The tables over many runs: per model, per model × tool, outcomes per day. */
export function aggregate(runs: readonly RunRecord[]): Stats {
  const models = new Map<string, ModelRow & { speeds: number[] }>();
  const tools = new Map<string, ToolRow>();
  const days = new Map<string, Record<string, number>>();
  for (const r of runs) {
    let m = models.get(r.model);
    if (!m)
      models.set(
        r.model,
        (m = {
          model: r.model,
          runs: 0,
          outcomes: {},
          calls: 0,
          failures: 0,
          repaired: 0,
          salvaged: 0,
          loopsCut: 0,
          rungs: {},
          promptTokens: 0,
          generatedTokens: 0,
          speeds: [],
        }),
      );
    m.runs++;
    bump(m.outcomes, r.status);
    m.calls += r.calls.length;
    m.failures += r.calls.filter((c) => !c.ok).length;
    m.repaired += r.calls.filter((c) => c.repairs.length).length;
    m.salvaged += r.salvaged;
    m.loopsCut += r.loopsCut;
    bump(m.rungs, r.rung);
    m.promptTokens += r.promptTokens;
    m.generatedTokens += r.generatedTokens;
    if (r.tokensPerSecond !== undefined) m.speeds.push(r.tokensPerSecond);
    for (const c of r.calls) {
      const key = `${r.model}\0${c.tool}`;
      let t = tools.get(key);
      if (!t)
        tools.set(key, (t = { model: r.model, tool: c.tool, calls: 0, failures: {}, repairs: {} }));
      t.calls++;
      if (!c.ok) bump(t.failures, c.kind ?? "failed");
      for (const k of c.repairs) bump(t.repairs, k);
    }
    const day = r.at.slice(0, 10);
    bump(days.get(day) ?? days.set(day, {}).get(day)!, r.status);
  }
  return {
    runs: runs.length,
    threads: new Set(runs.map((r) => r.thread)).size,
    models: [...models.values()]
      .map(({ speeds, ...m }) =>
        speeds.length
          ? { ...m, tokensPerSecond: speeds.reduce((a, b) => a + b, 0) / speeds.length }
          : m,
      )
      .sort((a, b) => a.model.localeCompare(b.model)),
    tools: [...tools.values()].sort(
      (a, b) => a.model.localeCompare(b.model) || a.tool.localeCompare(b.tool),
    ),
    stopped: runs
      .filter((r) => r.status === "stopped")
      .map(({ at, thread, model, error }) => ({ at, thread, model, error: error ?? "" }))
      .sort((a, b) => b.at.localeCompare(a.at))
      .slice(0, STOPPED_SHOWN),
    days: [...days.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([day, outcomes]) => ({ day, outcomes })),
  };
}

/** "done 2, gave_up 1" (zeros left out), or `none` when every count is zero. */
export const countsText = (rec: Partial<Record<string, number>>, none = "-") =>
  Object.entries(rec)
    .filter(([, v]) => v)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ") || none;
