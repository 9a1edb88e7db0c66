/**
 * The analyst's units step with the queue in between: the same node slot as `analyze-units`, but
 * instead of calling the model it sends each unit that needs analysis to the queue (one job per
 * unit, keyed by path and content hash), waits for the workers, and folds folder summaries
 * bottom-up as their units complete. The graph around it — enumerate, summarize-folders,
 * write-report — is the single-process analyst's, so the report is the same.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { readUnit, type FileUnit } from "../analysis/enumerate.js";
import { createAnalyzeUnitsNode } from "../analysis/nodes/analyze-units.js";
import { foldFolder } from "../analysis/nodes/summarize-folders.js";
import { analystStep } from "../analysis/runtime.js";
import type { AnalystStateUpdate, AnalystStateValue } from "../analysis/state.js";
import { factsOf } from "../analysis/structure.js";
import type { GraphDeps } from "../run/model.js";
import { FoldPlan } from "./fold-plan.js";
import { UNIT_ATTEMPTS, unitJobKey, type UnitJob } from "./jobs.js";
import type { UnitQueue } from "./queue.js";
import { formatStatusLine, runStatuses } from "./status.js";

export interface DispatchOptions {
  queue: UnitQueue;
  /** How long a worker may hold a unit before its lease expires and another takes it. */
  leaseSeconds: number;
  /** How often the queue is read while waiting, ms. */
  pollMs?: number;
  /** Units on the queue ahead of the completions (default 1000). */
  window?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createDispatchUnitsNode(deps: GraphDeps, d: DispatchOptions) {
  const local = createAnalyzeUnitsNode(deps);
  return async (
    state: AnalystStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<AnalystStateUpdate> => {
    const { env, manifest, records, ...step } = await analystStep(config, deps, state);
    // Without a model there is nothing for workers to do: the structural facts are local and quick.
    if (!manifest.model) return local(state, config);
    const model = manifest.model;
    const depth = env.settings.depth;
    const run = env.threadId;
    const paths = new Set(manifest.files.map((f) => f.path));
    const plan = new FoldPlan(
      manifest.files.map((f) => f.path),
      manifest.folders,
    );
    const ready: string[] = plan.initiallyReady();
    let done = 0;
    const progress = (current: string, reused: boolean, queue?: string) =>
      env.emit({
        type: "analysis",
        phase: "units",
        done,
        total: state.total,
        current,
        reused,
        ...(queue ? { queue } : {}),
      });

    // Same reuse rule as the single-process step: same content, model, depth and a finding.
    const since = await d.queue.dbNow();
    const pending = new Map<string, FileUnit>();
    const toSend: FileUnit[] = [];
    let reused = 0;
    for (const unit of manifest.files) {
      const stored = await records.unit(unit.path);
      if (
        stored?.hash === unit.hash &&
        stored.model === model &&
        stored.depth === depth &&
        stored.finding
      ) {
        reused++;
        done++;
        ready.push(...plan.unitDone(unit.path));
        progress(unit.path, true);
        continue;
      }
      pending.set(unitJobKey({ target: state.target, unit, model, depth }), unit);
      toSend.push(unit);
    }
    // Largest first, and only `window` ahead of the completions: a worker's take reads every
    // queued job (pg-boss sorts them by priority), so a short queue keeps it cheap.
    toSend.sort((a, b) => b.bytes - a.bytes);
    const window = d.window ?? 1000;
    let sent = 0;
    const topUp = async () => {
      const finished = toSend.length - pending.size;
      const upTo = Math.min(toSend.length, finished + window);
      for (let i = sent; i < upTo; i += 200) {
        const jobs = await Promise.all(
          toSend.slice(i, Math.min(upTo, i + 200)).map(async (unit): Promise<UnitJob> => ({
            v: 1,
            run,
            target: state.target,
            unit,
            model,
            depth,
            text: await readUnit(state.target, unit.path),
          })),
        );
        await d.queue.enqueue(jobs, d.leaseSeconds);
      }
      sent = Math.max(sent, upTo);
    };
    await topUp();

    let analyzed = 0;
    let failed = 0;
    let seen = since;
    let lastStatus = 0;
    const fold = async () => {
      while (ready.length) {
        const now = ready.splice(0, env.settings.concurrency);
        await Promise.all(
          now.map(async (folder) => {
            await foldFolder(manifest, records, folder, step.budgeted);
            ready.push(...plan.folderDone(folder));
          }),
        );
      }
    };
    while (pending.size > 0) {
      if (config.signal?.aborted) throw new Error("the analysis was stopped");
      for (const job of await d.queue.finishedSince(run, seen - 1000)) {
        const unit = pending.get(job.key);
        if (!unit) continue;
        pending.delete(job.key);
        seen = Math.max(seen, job.finishedAt);
        if (job.state === "failed") {
          // Reported, not retried forever: the unit's record says why, the report lists it.
          failed++;
          const text = await readUnit(state.target, unit.path);
          await records.putUnit({
            path: unit.path,
            hash: unit.hash,
            facts: await factsOf(unit, text, paths),
            model,
            depth,
            failed: `failed ${UNIT_ATTEMPTS} times on the workers: ${job.output.error ?? job.output.value?.message ?? "no reason given"}`,
          });
        } else if (job.output.finding === false) failed++;
        else analyzed++;
        done++;
        ready.push(...plan.unitDone(unit.path));
        progress(unit.path, false);
      }
      if (Date.now() - lastStatus > 1000) {
        lastStatus = Date.now();
        const [s] = runStatuses(await d.queue.census(run), await d.queue.dbNow());
        if (s) progress(`${pending.size} units left`, false, formatStatusLine(s));
      }
      await topUp();
      await fold();
      if (pending.size > 0) await sleep(d.pollMs ?? 250);
    }
    await fold();
    return {
      cursor: state.total,
      analyzed: state.analyzed + analyzed,
      reused: state.reused + reused,
      failed: state.failed + failed,
      largestRequest: step.largest(),
    };
  };
}
