/**
 * keel eval: the task set (tasks.ts) run k times per tool channel against a live server, each run a
 * real keel run in a fresh workspace, checked on disk. Scored per task and channel: pass^k (all k
 * attempts pass), the share of well-formed tool calls, repair and salvage rates, the ladder's
 * highest rung, prompt tokens and time. The runs land in the checkpoint store (keel stats reads
 * them) and the report in the store under ["keel", "eval"].
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { settingsFrom, type SettingsInput } from "../coder/context.js";
import { createCapabilityProbe } from "../models/probe.js";
import { retryPolicy } from "../run/model.js";
import { runSession } from "../session/session.js";
import { RUNGS, type Rung } from "../guard/ladder.js";
import { TOOL_MODES, type ToolMode } from "../models/capabilities.js";
import { openPersistence } from "../persistence/open.js";
import { collectRuns } from "../stats/collect.js";
import type { RunRecord } from "../coder/learning/run-record.js";
import type { ToolFailureKind } from "../tools/types.js";
import { runPeer, type EvalAgent, type PeerOutcome } from "./peers.js";
import { EVAL_TASKS, setUp, type EvalTask } from "./tasks.js";

/** The tool channels an eval runs each task on: every tool mode. */
export const EVAL_MODES = TOOL_MODES;
export type EvalMode = ToolMode;

/** Calls the model got wrong in a way keel had to refuse (not a repair): not well formed. */
const MALFORMED: ReadonlySet<ToolFailureKind> = new Set(["invalid_arguments", "unknown_tool"]);

export interface Attempt {
  task: string;
  mode: EvalMode;
  attempt: number;
  thread: string;
  pass: boolean;
  /** What the check found wrong ("" when it passed), or the run's error. */
  problem: string;
  status: string;
  calls: number;
  wellFormed: number;
  repaired: number;
  turns: number;
  salvaged: number;
  rung: Rung;
  promptTokens: number;
  seconds: number;
}

export interface TaskScore {
  task: string;
  mode: EvalMode;
  k: number;
  passes: number;
  /** Every one of the k attempts passed. */
  passK: boolean;
  wellFormedRate: number;
  repairRate: number;
  salvageRate: number;
  /** The highest rung any attempt reached. */
  rung: Rung;
  promptTokens: number;
  seconds: number;
}

/** Where eval reports live in the store (keel stats reads them). */
export const EVAL_NAMESPACE = ["keel", "eval"];

export interface EvalReport {
  at: string;
  /** Who ran the tasks: keel, or a bare agent with the same model, server and tools. */
  agent: EvalAgent;
  model: string;
  provider: string;
  k: number;
  modes: EvalMode[];
  scores: TaskScore[];
  /** Per mode: tasks whose k attempts all passed, of all tasks. */
  passK: Record<string, { tasks: number; passed: number }>;
  attempts: Attempt[];
}

const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);

/** An attempt's numbers from its run record (coder/learning/run-record.ts) and its check. */
export function scoreAttempt(
  base: Pick<Attempt, "task" | "mode" | "attempt" | "thread" | "seconds">,
  run: RunRecord | undefined,
  problem: string,
): Attempt {
  const calls = run?.calls ?? [];
  return {
    ...base,
    pass: problem === "",
    problem,
    status: run?.status ?? "error",
    calls: calls.length,
    wellFormed: calls.filter((c) => c.repairs.length === 0 && !(c.kind && MALFORMED.has(c.kind)))
      .length,
    repaired: calls.filter((c) => c.repairs.length > 0).length,
    turns: run?.turns ?? 0,
    salvaged: run?.salvaged ?? 0,
    rung: run?.rung ?? "none",
    promptTokens: run?.promptTokens ?? 0,
  };
}

/** The scores per task and mode, and the pass^k totals. */
export function scoreAttempts(
  attempts: readonly Attempt[],
  k: number,
): Pick<EvalReport, "scores" | "passK"> {
  const scores: TaskScore[] = [];
  const passK: EvalReport["passK"] = {};
  const keys = [...new Set(attempts.map((a) => `${a.mode}\0${a.task}`))];
  for (const key of keys) {
    const [mode, task] = key.split("\0") as [EvalMode, string];
    const mine = attempts.filter((a) => a.mode === mode && a.task === task);
    const sum = (f: (a: Attempt) => number) => mine.reduce((n, a) => n + f(a), 0);
    const score: TaskScore = {
      task,
      mode,
      k,
      passes: mine.filter((a) => a.pass).length,
      passK: mine.length === k && mine.every((a) => a.pass),
      wellFormedRate: ratio(
        sum((a) => a.wellFormed),
        sum((a) => a.calls),
      ),
      repairRate: ratio(
        sum((a) => a.repaired),
        sum((a) => a.calls),
      ),
      salvageRate: ratio(
        sum((a) => a.salvaged),
        sum((a) => a.turns),
      ),
      rung: RUNGS[Math.max(...mine.map((a) => RUNGS.indexOf(a.rung)))]!,
      promptTokens: Math.round(sum((a) => a.promptTokens) / mine.length),
      seconds: sum((a) => a.seconds) / mine.length,
    };
    scores.push(score);
    const total = (passK[mode] ??= { tasks: 0, passed: 0 });
    total.tasks++;
    if (score.passK) total.passed++;
  }
  return { scores, passK };
}

export interface EvalOptions {
  k: number;
  modes: readonly EvalMode[];
  checkpoints: string;
  /** The model and server (the run settings of every attempt). */
  settings: Omit<SettingsInput, "workspace"> & { model: string; provider?: string };
  tasks?: readonly EvalTask[];
  /** Default keel. A bare agent runs on the native channel only (it has no other). */
  agent?: EvalAgent;
  onAttempt?: (a: Attempt, done: number, total: number) => void;
  /** Use the model's calibration profile (default true; keel calibrate measures without it). */
  profile?: boolean;
}

/** Runs every task k times per mode; throws the model server's error when a run cannot reach it. */
export async function runEval(opts: EvalOptions): Promise<EvalReport> {
  const tasks = opts.tasks ?? EVAL_TASKS;
  const agent = opts.agent ?? "keel";
  const at = new Date().toISOString();
  const stamp = at.replace(/[-:.TZ]/g, "").slice(0, 14);
  const attempts: Attempt[] = [];
  const total = tasks.length * opts.k * opts.modes.length;
  for (const mode of opts.modes)
    for (const task of tasks)
      for (let i = 1; i <= opts.k; i++) {
        const a = await runAttempt({
          task,
          attempt: i,
          mode,
          thread: `eval-${stamp}-${task.id}-${mode}-${i}`,
          checkpoints: opts.checkpoints,
          settings: opts.settings,
          agent,
          ...(opts.profile === false ? { profile: false } : {}),
        });
        attempts.push(a);
        opts.onAttempt?.(a, attempts.length, total);
      }
  const report: EvalReport = {
    at,
    agent,
    model: await servedName(opts.settings),
    provider: opts.settings.provider ?? "ollama",
    k: opts.k,
    modes: [...opts.modes],
    ...scoreAttempts(attempts, opts.k),
    attempts,
  };
  const persistence = await openPersistence(opts.checkpoints);
  try {
    await persistence.store.put(
      EVAL_NAMESPACE,
      `${stamp}-${agent === "keel" ? "" : `${agent}-`}${report.model}`,
      report,
    );
  } finally {
    await persistence.close();
  }
  return report;
}

/**
 * The model as the server names it, the report's name whichever agent ran: a llama-server answers
 * to any name, and keel's runs are recorded under the one it gives (`modelFitOf`'s `name`). The
 * configured name where the server does not say.
 */
async function servedName(settings: SettingsInput): Promise<string> {
  const s = settingsFrom({ context: settings });
  const policy = retryPolicy({ ...s, retries: 0 });
  const profile = await createCapabilityProbe()(policy.url, s.model, policy).catch(() => undefined);
  return profile?.model ?? s.model;
}

/** One attempt at one task: its own workspace, its own thread. */
export interface AttemptOptions {
  task: EvalTask;
  attempt: number;
  mode: EvalMode;
  thread: string;
  checkpoints: string;
  settings: EvalOptions["settings"];
  agent?: EvalAgent;
  /** Use the model's calibration profile (default true). */
  profile?: boolean;
}

/**
 * Runs one attempt in a fresh temporary workspace and checks it on disk; throws `EvalServerError`
 * when keel's run could not reach the model server.
 */
export async function runAttempt(o: AttemptOptions): Promise<Attempt> {
  const { task, mode, thread } = o;
  const base = { task: task.id, mode, attempt: o.attempt, thread };
  const workspace = await mkdtemp(path.join(tmpdir(), `keel-eval-${task.id}-`));
  try {
    await setUp(task, workspace);
    const started = performance.now();
    if (o.agent && o.agent !== "keel") {
      const peer = await runPeer(o.agent, task.request, { ...o.settings, workspace, undo: false });
      const seconds = (performance.now() - started) / 1000;
      const problem =
        peer.error && peer.status === "error" && peer.calls === 0
          ? `the run failed: ${peer.error.slice(0, 200)}`
          : await task.check(workspace, peer.answer);
      return peerAttempt({ ...base, seconds }, peer, problem);
    }
    const outcome = await runSession({
      request: task.request,
      threadId: thread,
      checkpoints: o.checkpoints,
      // the raw model is measured: no learned lines, no undo snapshots
      settings: {
        ...o.settings,
        workspace,
        toolMode: mode,
        learnDescriptions: false,
        undo: false,
      },
      log: () => undefined,
      ...(o.profile === false ? { profile: false } : {}),
    });
    const seconds = (performance.now() - started) / 1000;
    if (outcome.status === "error")
      throw new EvalServerError(outcome.error ?? "the model server failed");
    const problem = await task.check(workspace, outcome.summary);
    return scoreAttempt({ ...base, seconds }, await runOf(o.checkpoints, thread), problem);
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

/** A bare agent's attempt in the report's terms: no repairs, no salvage, no ladder. */
export function peerAttempt(
  base: Pick<Attempt, "task" | "mode" | "attempt" | "thread" | "seconds">,
  peer: PeerOutcome,
  problem: string,
): Attempt {
  return {
    ...base,
    pass: problem === "",
    problem,
    status: peer.status,
    calls: peer.calls,
    wellFormed: peer.wellFormed,
    repaired: 0,
    turns: peer.turns,
    salvaged: 0,
    rung: "none",
    promptTokens: peer.promptTokens,
  };
}

export class EvalServerError extends Error {
  override name = "EvalServerError";
}

async function runOf(checkpoints: string, thread: string): Promise<RunRecord | undefined> {
  const persistence = await openPersistence(checkpoints);
  try {
    return (await collectRuns(persistence.checkpointer, thread))[0];
  } finally {
    await persistence.close();
  }
}
