/**
 * What keel stats counts, pure: one record per run, read from the state a run left in its
 * checkpoints (the trail of its tool calls, the ladder's rung, the turns' usage), and the table per
 * model × tool over many runs. Nothing here is new data: it is what the runs already persisted.
 */
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { CoderStateValue, TurnUsage } from "../agent/state.js";
import type { Rung } from "../guard/ladder.js";
import type { ToolFailureKind } from "../tools/types.js";

/** A kind of repair keel made to a call, from its note (tools/repair.ts). */
export const REPAIR_KINDS = ["tool name", "field alias", "JSON string", "type", "other"] as const;
export type RepairKind = (typeof REPAIR_KINDS)[number];

export function repairKind(note: string): RepairKind {
  if (/^called \S+ for /.test(note)) return "tool name";
  if (/^used \S+ as /.test(note)) return "field alias";
  if (note.startsWith("parsed the arguments from a JSON string")) return "JSON string";
  if (/^\S+: .* → /.test(note)) return "type";
  return "other";
}

export interface CallRecord {
  tool: string;
  ok: boolean;
  /** Failure kind when not ok. */
  kind?: ToolFailureKind;
  repairs: RepairKind[];
}

export interface RunRecord {
  thread: string;
  /** When the run's last checkpoint was written (ISO). */
  at: string;
  model: string;
  request: string;
  intent: string | null;
  status: CoderStateValue["status"];
  turns: number;
  calls: CallRecord[];
  /** Turns whose calls were salvaged from text on the native channel. */
  salvaged: number;
  loopsCut: number;
  rung: Rung;
  promptTokens: number;
  generatedTokens: number;
  /** Generation speed averaged over the turns that reported it. */
  tokensPerSecond?: number;
}

interface TurnMeta {
  keel_usage?: TurnUsage;
  keel_turn?: { model?: string; salvaged?: boolean };
}

/** The run a state holds (its latest request), or undefined for a state that is not a coder run. */
export function runRecord(
  thread: string,
  at: string,
  values: Partial<CoderStateValue>,
): RunRecord | undefined {
  if (!values.request || !Array.isArray(values.trail) || !Array.isArray(values.messages))
    return undefined;
  const turns = runTurns(values.messages, values.request);
  const metas = turns.map((m) => (m.response_metadata ?? {}) as TurnMeta);
  const usage = metas.map((m) => m.keel_usage).filter((u): u is TurnUsage => u !== undefined);
  const speeds = usage.map((u) => u.tokensPerSecond).filter((v): v is number => v !== undefined);
  const model =
    metas.map((m) => m.keel_turn?.model).find((m): m is string => Boolean(m)) ??
    values.fit?.model ??
    "unknown";
  return {
    thread,
    at,
    model,
    request: values.request,
    intent: values.intent?.intent ?? null,
    status: values.status ?? "running",
    turns: values.turns ?? turns.length,
    calls: values.trail.map((t) => ({
      tool: t.name,
      ok: t.ok,
      ...(t.kind ? { kind: t.kind } : {}),
      repairs: t.repaired ? t.repaired.split("; ").map(repairKind) : [],
    })),
    salvaged: metas.filter((m) => m.keel_turn?.salvaged).length,
    loopsCut: values.trail.filter((t) => t.kind === "loop").length,
    rung: values.rung ?? "none",
    promptTokens: usage.reduce((n, u) => n + u.promptTokens, 0),
    generatedTokens: usage.reduce((n, u) => n + u.generatedTokens, 0),
    ...(speeds.length
      ? { tokensPerSecond: speeds.reduce((a, b) => a + b, 0) / speeds.length }
      : {}),
  };
}

/** The AI messages after the newest human message holding the request. */
function runTurns(messages: readonly BaseMessage[], request: string): AIMessage[] {
  let from = messages.length;
  while (from > 0) {
    const m = messages[from - 1]!;
    if (HumanMessage.isInstance(m) && m.content === request) break;
    from--;
  }
  return messages.slice(from).filter((m): m is AIMessage => AIMessage.isInstance(m));
}

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

export interface ToolRow {
  model: string;
  tool: string;
  calls: number;
  failures: Record<string, number>;
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

/** A learned description line of a model and how it fared (judged by stats/lessons.ts). */
export interface LessonState {
  key: string;
  tool: string;
  line: string;
  status: "active" | "retired";
  /** Misuses per call of the tool without the line shown, and with it. */
  before: { calls: number; misuses: number };
  after: { calls: number; misuses: number };
}

export interface Stats {
  runs: number;
  threads: number;
  models: ModelRow[];
  tools: ToolRow[];
  /** Outcomes per day (UTC), for the chart over time. */
  days: Array<{ day: string; outcomes: Record<string, number> }>;
  /** Learned description lines per model, active or retired (stats/lessons.ts). */
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
