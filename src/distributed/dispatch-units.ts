/**
 * The analyst's units step with the queue in between: the same node slot as `analyze-units`, but
 * instead of calling the model it sends each unit that needs analysis to the queue (one job per
 * unit, keyed by path and content hash), waits for the workers, and folds folder summaries
 * bottom-up as their units complete. The graph around it — enumerate, summarize-folders,
 * write-report — is the single-process analyst's, so the report is the same.
 *
 * A coordinator started again on the same analysis (after a crash or a kill) finds the jobs it
 * sent: units done stay done, units still queued or running are waited for, not sent again.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { FileUnit } from "../analyst/enumerate.js";
import { createAnalyzeUnitsNode } from "../analyst/nodes/analyze-units.js";
import { foldFolder } from "../analyst/nodes/summarize-folders.js";
import { folderIndex } from "../analyst/records.js";
import { analystStep, nothingToDo } from "../analyst/runtime.js";
import type { AnalystStateUpdate, AnalystStateValue } from "../analyst/state.js";
import { factsOf, NO_FACTS } from "../analyst/structure.js";
import { unitTextReader } from "../analyst/unit-text.js";
import type { GraphDeps } from "../run/model.js";
import { FoldPlan } from "./fold-plan.js";
import { JOB_FORMAT, UNIT_ATTEMPTS, unitJobKey, type UnitJob, type UnitOutcome } from "./jobs.js";
import type { AnalysisJob, UnitQueue } from "./queue.js";
import { formatStatusLine, withRate } from "./status.js";

export interface DispatchOptions {
  queue: UnitQueue;
  /** How long a job may stay with a holder that neither finishes nor renews it, seconds. */
  leaseSeconds: number;
  /** How often the queue is read while waiting, ms. */
  pollMs?: number;
  /** How often the coordinator sweeps for dead workers' jobs and shows the queue's line, ms (5 s). */
  sweepMs?: number;
  /** Units on the queue ahead of the completions (default 1000). */
  window?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How a unit stands when the coordinator starts: done already, waited for, failed, or to send. */
type Standing = "reused" | "analyzed" | "failed" | "waiting" | "failed-job" | "send";

/**
 * A unit's standing from its record and this analysis's earlier jobs (a coordinator started
 * again): a finding is done (analysed in this analysis if one of its jobs completed); a failed
 * record a job of this analysis wrote is done; an open job is waited for; a failed job is failed.
 */
export function standingOf(
  record: { finding?: unknown; failed?: string; model?: string; depth?: string } | undefined,
  jobs: AnalysisJob[],
  model: string,
  depth: string,
): Standing {
  const ours = record && record.model === model && record.depth === depth;
  const completed = jobs.some((j) => j.state === "completed");
  if (ours && record.finding) return completed ? "analyzed" : "reused";
  if (ours && record.failed && completed) return "failed";
  if (jobs.some((j) => j.state === "created" || j.state === "retry" || j.state === "active"))
    return "waiting";
  if (jobs.some((j) => j.state === "failed")) return "failed-job";
  return "send";
}

/** Why a job failed for good, as the unit's record and the report say it. */
const failure = (o: (UnitOutcome & { value?: { message?: string } }) | null | undefined) =>
  `failed ${UNIT_ATTEMPTS} times on the workers: ${o?.error ?? o?.value?.message ?? "no reason given"}`;

export function createDispatchUnitsNode(deps: GraphDeps, d: DispatchOptions) {
  const local = createAnalyzeUnitsNode(deps);
  return async (
    state: AnalystStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<AnalystStateUpdate> => {
    const step = await analystStep(config, deps, state);
    const { env, manifest } = step;
    // Without a model there is nothing for workers to do: the structural facts are local and quick.
    if (!manifest.model) return local(state, config);
    if (await step.unchanged())
      return nothingToDo(env, "units", state.total, {
        cursor: state.total,
        reused: state.reused + state.total,
      });
    const run = new Dispatch(d, step, manifest.model, state.total);
    await run.start();
    await run.wait(config.signal);
    // the workers wrote records for this analysis (or failures were recorded): a new epoch
    if (run.counts.analyzed + run.counts.failed > 0) await step.records.bumpEpoch();
    return {
      cursor: state.total,
      analyzed: state.analyzed + run.counts.analyzed,
      reused: state.reused + run.counts.reused,
      failed: state.failed + run.counts.failed,
      largestRequest: step.largest(),
    };
  };
}

type Step = Awaited<ReturnType<typeof analystStep>>;

/** One coordinator's run of the units step: what it sent, what it waits for, what is done. */
class Dispatch {
  readonly counts = { done: 0, analyzed: 0, reused: 0, failed: 0 };
  private readonly manifest: Step["manifest"];
  private readonly depth: Step["env"]["settings"]["depth"];
  private readonly plan: FoldPlan;
  private readonly index: ReturnType<typeof folderIndex>;
  private readonly read: ReturnType<typeof unitTextReader>;
  private readonly ready: string[];
  private readonly pending = new Map<string, FileUnit>();
  private readonly toSend: FileUnit[] = [];
  private readonly perWorker: Record<string, number> = {};
  private paths: ReadonlySet<string> | undefined;
  private sent = 0;
  private since = 0;
  private firstDone: number | undefined;
  private queueLine: string | undefined;

  constructor(
    private readonly d: DispatchOptions,
    private readonly step: Step,
    private readonly model: string,
    private readonly total: number,
  ) {
    this.manifest = step.manifest;
    this.depth = step.env.settings.depth;
    this.plan = new FoldPlan(
      this.manifest.files.map((f) => f.path),
      this.manifest.folders,
    );
    this.index = folderIndex(this.manifest.files, this.manifest.folders);
    this.read = unitTextReader(this.manifest.target);
    this.ready = this.plan.initiallyReady();
  }

  private keyOf(unit: FileUnit): string {
    return unitJobKey(this.manifest.target, { unit, model: this.model, depth: this.depth });
  }

  private emit(current: string, reused: boolean) {
    this.step.env.emit({
      type: "analysis",
      phase: "units",
      done: this.counts.done,
      total: this.total,
      current,
      reused,
      ...(this.queueLine ? { queue: this.queueLine } : {}),
    });
  }

  private finish(unit: FileUnit, how: "analyzed" | "reused" | "failed") {
    this.counts.done++;
    this.counts[how]++;
    this.ready.push(...this.plan.unitDone(unit.path));
    this.emit(unit.path, how === "reused");
  }

  /** A unit that will have no finding: its record says why, the report lists it. */
  private async recordFailure(unit: FileUnit, why: string) {
    const got = await this.read(unit);
    const paths = (this.paths ??= new Set(this.manifest.files.map((f) => f.path)));
    const facts = "text" in got ? await factsOf(unit, got.text, paths) : NO_FACTS;
    await this.step.records.putUnit({
      path: unit.path,
      hash: unit.hash,
      facts,
      model: this.model,
      depth: this.depth,
      failed: why,
    });
    this.finish(unit, "failed");
  }

  /**
   * Where each unit stands: done (a stored finding), waited for (a job of this analysis still
   * queued or running: a coordinator started again), failed, or to send. The database's clock is
   * read first: a job that finishes from then on is found by the polls.
   */
  async start() {
    this.since = await this.d.queue.dbNow();
    await this.d.queue.sweep();
    const earlier = byKey(await this.d.queue.jobsOf(this.manifest.id));
    const stored = await this.step.records.units(this.manifest.files);
    for (const [i, unit] of this.manifest.files.entries()) {
      const jobs = earlier.get(this.keyOf(unit)) ?? [];
      const standing = standingOf(stored[i], jobs, this.model, this.depth);
      if (standing === "reused" || standing === "analyzed" || standing === "failed")
        this.finish(unit, standing);
      else if (standing === "failed-job")
        await this.recordFailure(unit, failure(jobs.find((j) => j.state === "failed")?.output));
      else {
        this.pending.set(this.keyOf(unit), unit);
        if (standing === "send") this.toSend.push(unit);
      }
    }
    // Largest first, and only `window` ahead of the completions: a take reads the queued jobs
    // in order of size, so a short queue keeps it cheap. Texts are read when they are sent.
    this.toSend.sort((a, b) => b.bytes - a.bytes);
  }

  /** Sends units while fewer than `window` are on the queue; a unit that cannot be read fails here. */
  private async topUp() {
    // pending: the units waited for, sent or not yet sent
    const onQueue = this.pending.size - (this.toSend.length - this.sent);
    const upTo = Math.min(this.toSend.length, this.sent + (this.d.window ?? 1000) - onQueue);
    const batch: Array<{ data: UnitJob; key: string }> = [];
    for (; this.sent < upTo; this.sent++) {
      const unit = this.toSend[this.sent]!;
      const got = await this.read(unit);
      if ("refused" in got) {
        this.pending.delete(this.keyOf(unit));
        await this.recordFailure(unit, got.refused);
        continue;
      }
      batch.push({
        key: this.keyOf(unit),
        data: {
          v: JOB_FORMAT,
          run: this.step.env.threadId,
          analysis: this.manifest.id,
          unit,
          model: this.model,
          depth: this.depth,
          text: got.text,
        },
      });
    }
    await this.d.queue.enqueue(batch, this.d.leaseSeconds);
  }

  /** Summarises the folders whose units and subfolders are all done. */
  private async fold() {
    while (this.ready.length) {
      const now = this.ready.splice(0, this.step.env.settings.concurrency);
      await Promise.all(
        now.map(async (folder) => {
          await foldFolder(
            this.manifest,
            this.step.records,
            folder,
            this.step.budgeted,
            this.index,
          );
          this.ready.push(...this.plan.folderDone(folder));
        }),
      );
    }
  }

  /** The jobs finished since the last poll: their units are done (or failed). */
  private async poll() {
    for (const job of await this.d.queue.finishedSince(this.manifest.id, this.since - 1000)) {
      const unit = this.pending.get(job.key);
      if (!unit) continue;
      this.pending.delete(job.key);
      this.since = Math.max(this.since, job.finishedAt);
      this.firstDone ??= job.finishedAt;
      if (job.state === "failed") await this.recordFailure(unit, failure(job.output));
      else {
        const w = job.output.worker;
        this.perWorker[w] = (this.perWorker[w] ?? 0) + 1;
        this.finish(unit, job.output.finding === false ? "failed" : "analyzed");
      }
    }
  }

  /** Puts dead workers' jobs back, and shows the queue's line with the workers' health. */
  private async showQueue() {
    await this.d.queue.sweep();
    const open = await this.d.queue.openOf(this.manifest.id);
    const s = withRate(
      {
        run: this.step.env.threadId,
        analysis: this.manifest.id,
        total: this.total,
        done: this.counts.done,
        inFlight: open.active ?? 0,
        queued: (open.created ?? 0) + (open.retry ?? 0),
        failed: this.counts.failed,
        perWorker: this.perWorker,
        unitsPerSecond: null,
        etaSeconds: null,
      },
      this.firstDone,
      await this.d.queue.dbNow(),
    );
    this.queueLine = formatStatusLine(s, await this.d.queue.workers());
    this.emit(`${this.pending.size} units left`, false);
  }

  /** Sends, polls, sweeps and folds until every unit is done. */
  async wait(signal: AbortSignal | undefined) {
    let shown = 0;
    await this.topUp();
    while (this.pending.size > 0) {
      if (signal?.aborted) throw new Error("the analysis was stopped");
      await this.poll();
      if (Date.now() - shown > (this.d.sweepMs ?? 5000)) {
        shown = Date.now();
        await this.showQueue();
      }
      await this.topUp();
      await this.fold();
      if (this.pending.size > 0) await sleep(this.d.pollMs ?? 250);
    }
    await this.fold();
  }
}

/** Jobs grouped by their singleton key. */
function byKey(jobs: AnalysisJob[]): Map<string, AnalysisJob[]> {
  const out = new Map<string, AnalysisJob[]>();
  for (const j of jobs) out.set(j.key, [...(out.get(j.key) ?? []), j]);
  return out;
}
