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
import type { FileUnit } from "../analysis/enumerate.js";
import { createAnalyzeUnitsNode } from "../analysis/nodes/analyze-units.js";
import { foldFolder } from "../analysis/nodes/summarize-folders.js";
import { folderIndex } from "../analysis/records.js";
import { analystStep, nothingToDo } from "../analysis/runtime.js";
import type { AnalystStateUpdate, AnalystStateValue } from "../analysis/state.js";
import { factsOf, NO_FACTS } from "../analysis/structure.js";
import { unitTextReader } from "../analysis/unit-text.js";
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
    const { env, manifest, records, ...step } = await analystStep(config, deps, state);
    // Without a model there is nothing for workers to do: the structural facts are local and quick.
    if (!manifest.model) return local(state, config);
    if (await step.unchanged())
      return nothingToDo(env, "units", state.total, {
        cursor: state.total,
        reused: state.reused + state.total,
      });
    const model = manifest.model;
    const depth = env.settings.depth;
    const keyOf = (unit: FileUnit) => unitJobKey(manifest.target, { unit, model, depth });
    const index = folderIndex(manifest.files, manifest.folders);
    const plan = new FoldPlan(
      manifest.files.map((f) => f.path),
      manifest.folders,
    );
    const ready: string[] = plan.initiallyReady();
    const counts = { done: 0, analyzed: 0, reused: 0, failed: 0 };
    const perWorker: Record<string, number> = {};
    let queueLine: string | undefined;
    const finish = (unit: FileUnit, how: "analyzed" | "reused" | "failed") => {
      counts.done++;
      counts[how]++;
      ready.push(...plan.unitDone(unit.path));
      env.emit({
        type: "analysis",
        phase: "units",
        done: counts.done,
        total: state.total,
        current: unit.path,
        reused: how === "reused",
        ...(queueLine ? { queue: queueLine } : {}),
      });
    };
    const read = unitTextReader(manifest.target);
    const paths = new Set(manifest.files.map((f) => f.path));
    const recordFailure = async (unit: FileUnit, why: string) => {
      const got = await read(unit);
      const facts = "text" in got ? await factsOf(unit, got.text, paths) : NO_FACTS;
      await records.putUnit({ path: unit.path, hash: unit.hash, facts, model, depth, failed: why });
      finish(unit, "failed");
    };

    // The database's clock before anything is read: a job finished from here on is polled below.
    const since = await d.queue.dbNow();
    await d.queue.sweep();
    const earlier = byKey(await d.queue.jobsOf(manifest.id));
    const pending = new Map<string, FileUnit>();
    const toSend: FileUnit[] = [];
    const stored = await records.units(manifest.files);
    for (const [i, unit] of manifest.files.entries()) {
      const jobs = earlier.get(keyOf(unit)) ?? [];
      const standing = standingOf(stored[i], jobs, model, depth);
      if (standing === "reused" || standing === "analyzed" || standing === "failed")
        finish(unit, standing);
      else if (standing === "failed-job")
        await recordFailure(unit, failure(jobs.find((j) => j.state === "failed")?.output));
      else {
        pending.set(keyOf(unit), unit);
        if (standing === "send") toSend.push(unit);
      }
    }
    // Largest first, and only `window` ahead of the completions: a take reads the queued jobs
    // in order of size, so a short queue keeps it cheap. Texts are read when they are sent.
    toSend.sort((a, b) => b.bytes - a.bytes);
    let sent = 0;
    const topUp = async () => {
      const upTo = Math.min(toSend.length, counts.done + (d.window ?? 1000));
      const batch: Array<{ data: UnitJob; key: string }> = [];
      for (; sent < upTo; sent++) {
        const unit = toSend[sent]!;
        const got = await read(unit);
        if ("refused" in got) {
          pending.delete(keyOf(unit));
          await recordFailure(unit, got.refused);
          continue;
        }
        batch.push({
          key: keyOf(unit),
          data: {
            v: JOB_FORMAT,
            run: env.threadId,
            analysis: manifest.id,
            unit,
            model,
            depth,
            text: got.text,
          },
        });
      }
      await d.queue.enqueue(batch, d.leaseSeconds);
    };
    const fold = async () => {
      while (ready.length) {
        const now = ready.splice(0, env.settings.concurrency);
        await Promise.all(
          now.map(async (folder) => {
            await foldFolder(manifest, records, folder, step.budgeted, index);
            ready.push(...plan.folderDone(folder));
          }),
        );
      }
    };
    const first = { at: undefined as number | undefined };
    const showQueue = async () => {
      await d.queue.sweep();
      const open = await d.queue.openOf(manifest.id);
      const s = withRate(
        {
          run: env.threadId,
          analysis: manifest.id,
          total: state.total,
          done: counts.done,
          inFlight: open.active ?? 0,
          queued: (open.created ?? 0) + (open.retry ?? 0),
          failed: counts.failed,
          perWorker,
          unitsPerSecond: null,
          etaSeconds: null,
        },
        first.at,
        await d.queue.dbNow(),
      );
      queueLine = formatStatusLine(s, await d.queue.workers());
      env.emit({
        type: "analysis",
        phase: "units",
        done: counts.done,
        total: state.total,
        current: `${pending.size} units left`,
        reused: false,
        queue: queueLine,
      });
    };

    let seen = since;
    let lastShown = 0;
    await topUp();
    while (pending.size > 0) {
      if (config.signal?.aborted) throw new Error("the analysis was stopped");
      for (const job of await d.queue.finishedSince(manifest.id, seen - 1000)) {
        const unit = pending.get(job.key);
        if (!unit) continue;
        pending.delete(job.key);
        seen = Math.max(seen, job.finishedAt);
        first.at ??= job.finishedAt;
        if (job.state === "failed") await recordFailure(unit, failure(job.output));
        else {
          perWorker[job.output.worker] = (perWorker[job.output.worker] ?? 0) + 1;
          finish(unit, job.output.finding === false ? "failed" : "analyzed");
        }
      }
      if (Date.now() - lastShown > (d.sweepMs ?? 5000)) {
        lastShown = Date.now();
        await showQueue();
      }
      await topUp();
      await fold();
      if (pending.size > 0) await sleep(d.pollMs ?? 250);
    }
    await fold();
    // the workers wrote records for this analysis (or failures were recorded): a new epoch
    if (counts.analyzed + counts.failed > 0) await records.bumpEpoch();
    return {
      cursor: state.total,
      analyzed: state.analyzed + counts.analyzed,
      reused: state.reused + counts.reused,
      failed: state.failed + counts.failed,
      largestRequest: step.largest(),
    };
  };
}

/** Jobs grouped by their singleton key. */
function byKey(jobs: AnalysisJob[]): Map<string, AnalysisJob[]> {
  const out = new Map<string, AnalysisJob[]>();
  for (const j of jobs) out.set(j.key, [...(out.get(j.key) ?? []), j]);
  return out;
}
