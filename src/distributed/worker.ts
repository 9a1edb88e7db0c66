/**
 * `keel worker`'s loop: take a unit from the queue, analyse it with the single-process analyst's
 * own unit analysis (`analyzeUnit`: the same context window, the same parts and checks) against
 * the least-busy of this worker's model servers, write the finding to the store once, complete the
 * job. A server that fails is taken out of rotation and the unit goes to another; a unit that
 * throws fails its job, and pg-boss retries it until its attempts are spent.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { BaseStore } from "@langchain/langgraph";
import { analyzeUnit } from "../analysis/analyze-unit.js";
import {
  AnalystContextSchema,
  analystRunConfig,
  type AnalystSettingsInput,
} from "../analysis/context.js";
import { profileOf } from "../run/profile-use.js";
import { AnalysisRecords, type UnitRecord } from "../analysis/records.js";
import { analystEnv, type AnalystEnv } from "../analysis/runtime.js";
import { factsOf } from "../analysis/structure.js";
import { ModelServerError } from "../models/errors.js";
import type { GraphDeps } from "../run/model.js";
import { checkUnitJob, type UnitJob, type UnitOutcome } from "./jobs.js";
import { SERVER_DOWN_KINDS, ServerPool, type ModelServer } from "./pool.js";
import type { HeldJob, UnitQueue } from "./queue.js";

export interface WorkerOptions {
  queue: UnitQueue;
  store: BaseStore;
  servers: ModelServer[];
  /** This worker's name in job outcomes and `--status`. */
  name: string;
  /** The model to ask; default the model of each job (the coordinator's). */
  model?: string;
  /** Units analysed at once (default: one per server). */
  concurrency?: number;
  /** Model settings beneath the server and model (retries, window, API key…). */
  settings?: Omit<AnalystSettingsInput, "target" | "model" | "ollamaUrl" | "baseUrl" | "provider">;
  /** How long to wait when the queue is empty, ms. */
  pollMs?: number;
  /** Stop taking units; the ones in hand finish. */
  stop: AbortSignal;
  /** Stop now: the units in hand are left to their leases. */
  abort?: AbortSignal;
  deps?: GraphDeps;
  log?: (line: string) => void;
  now?: () => number;
}

export interface WorkerSummary {
  worker: string;
  analyzed: number;
  duplicates: number;
  failed: number;
}

/** Waits `ms`, or less when `signal` fires first. */
const sleep = (ms: number, signal?: AbortSignal) =>
  delay(ms, undefined, { signal }).catch(() => undefined);

/** A stored record that already answers this job: same content, model and depth, analysed. */
export function answers(r: UnitRecord | undefined, j: UnitJob, model: string): boolean {
  return Boolean(
    r &&
    r.hash === j.unit.hash &&
    r.model === model &&
    r.depth === j.depth &&
    (r.finding || r.failed),
  );
}

/** Runs until `stop`; resolves with what this worker did. */
export async function runWorker(o: WorkerOptions): Promise<WorkerSummary> {
  const now = o.now ?? Date.now;
  const log = o.log ?? (() => undefined);
  const pool = new ServerPool(o.servers);
  const summary: WorkerSummary = { worker: o.name, analyzed: 0, duplicates: 0, failed: 0 };
  const envs = new Map<string, Promise<AnalystEnv>>();
  const paths = new Map<string, Promise<ReadonlySet<string>>>();

  const envFor = (server: ModelServer, job: UnitJob, model: string): Promise<AnalystEnv> => {
    const key = `${server.provider}|${server.url}|${model}|${job.depth}`;
    let env = envs.get(key);
    if (!env) {
      const input = {
        ...o.settings,
        model,
        depth: job.depth,
        target: job.target,
        provider: server.provider,
        ...(server.provider === "openai" ? { baseUrl: server.url } : { ollamaUrl: server.url }),
      };
      // the model's calibration profile on this server, beneath the worker's own settings
      env = profileOf(AnalystContextSchema, input).then(({ beneath }) => {
        const config = analystRunConfig(job.run, input, undefined, beneath);
        return analystEnv({ ...config, store: o.store, signal: o.abort }, o.deps ?? {});
      });
      envs.set(key, env);
    }
    return env;
  };
  /** The run's unit paths (for resolving imports), from its manifest, once per run. */
  const pathsOf = (run: string) => {
    let p = paths.get(run);
    if (!p) {
      p = AnalysisRecords.manifest(o.store, run).then((m) => new Set(m.files.map((f) => f.path)));
      p.catch(() => paths.delete(run));
      paths.set(run, p);
    }
    return p;
  };

  /** The unit's finding from the first server that answers; a failing server leaves rotation. */
  async function analyse(job: UnitJob, model: string, facts: UnitRecord["facts"]) {
    let serverErrors = 0;
    for (;;) {
      if (o.abort?.aborted) throw new Error("worker stopped");
      const server = pool.take(now());
      if (!server) {
        await sleep(Math.max(50, pool.nextUp(now()) - now()), o.abort);
        continue;
      }
      const t0 = now();
      try {
        const env = await envFor(server, job, model);
        const finding = await analyzeUnit(
          await env.budgeted(() => undefined),
          job.unit,
          job.text,
          facts,
          job.depth,
        );
        pool.release(server.url, { ok: true });
        return { finding, server: server.url, modelMs: now() - t0 };
      } catch (err) {
        if (!(err instanceof ModelServerError) || !SERVER_DOWN_KINDS.includes(err.kind)) {
          pool.release(server.url, { ok: true }); // the server answered; the unit is the trouble
          throw err;
        }
        pool.release(server.url, { ok: false, error: err.message, now: now() });
        envs.clear(); // a server back later is probed afresh
        log(`server ${server.url} out of rotation: ${err.message}`);
        // Every server failed on this unit twice: the unit, not the servers, is the likely cause.
        if (++serverErrors >= 2 * o.servers.length) throw err;
      }
    }
  }

  async function handle(held: HeldJob): Promise<void> {
    const started = now();
    let job: UnitJob;
    try {
      job = checkUnitJob(held.data);
      const model = o.model ?? job.model;
      const records = new AnalysisRecords(o.store, job.target);
      const outcome = (
        result: UnitOutcome["result"],
        server?: string,
        modelMs?: number,
      ): UnitOutcome => ({
        worker: o.name,
        result,
        ms: now() - started,
        ...(server ? { server } : {}),
        ...(modelMs !== undefined ? { modelMs } : {}),
      });
      if (answers(await records.unit(job.unit.path), job, model)) {
        summary.duplicates++;
        await o.queue.complete(held.id, outcome("duplicate"));
        return;
      }
      const facts = await factsOf(job.unit, job.text, await pathsOf(job.run));
      const { finding, server, modelMs } = await analyse(job, model, facts);
      const record: UnitRecord = {
        path: job.unit.path,
        hash: job.unit.hash,
        facts,
        model,
        depth: job.depth,
        ...(finding
          ? { finding }
          : { failed: "the model's answer did not match the finding schema twice" }),
      };
      // Another worker may have finished this unit while its lease ran out here: write once.
      const wrote = !answers(await records.unit(job.unit.path), job, model);
      if (wrote) await records.putUnit(record);
      const done = await o.queue.complete(held.id, {
        ...outcome(wrote ? "analyzed" : "duplicate", server, modelMs),
        finding: Boolean(finding),
      });
      if (wrote) summary.analyzed++;
      else summary.duplicates++;
      log(
        `${job.unit.path}: ${wrote ? (finding ? "analysed" : "no usable finding") : "already there"} on ${server} in ${now() - started} ms${done ? "" : " (the job had been taken over)"}`,
      );
    } catch (err) {
      if (o.abort?.aborted) return; // left to its lease
      summary.failed++;
      const error = (err as Error).message;
      log(`unit failed (attempt ${held.retryCount + 1}): ${error}`);
      await o.queue.fail(held.id, { worker: o.name, error, ms: now() - started });
    }
  }

  async function slot(): Promise<void> {
    while (!o.stop.aborted) {
      const wait = pool.nextUp(now());
      if (wait > 0) {
        await sleep(Math.min(wait - now(), o.pollMs ?? 500), o.stop);
        continue;
      }
      let held: HeldJob | undefined;
      try {
        held = await o.queue.take();
      } catch (err) {
        log(`cannot take a unit: ${(err as Error).message}`);
        await sleep(2000, o.stop);
        continue;
      }
      if (!held) {
        await sleep(o.pollMs ?? 500, o.stop);
        continue;
      }
      await handle(held);
    }
  }

  await Promise.all(Array.from({ length: o.concurrency ?? o.servers.length }, slot));
  return summary;
}
