/**
 * `keel worker`'s loop: take a unit from the queue, check it against the run's manifest (the text
 * must be the text listed for that path), analyse it with the single-process analyst's own unit
 * analysis (`analyzeUnit`: the same context window, the same parts and checks) against the
 * least-busy of this worker's model servers, write the finding once, keyed by the hash of the text
 * analysed, and complete the job. A server that fails is taken out of rotation and the unit goes
 * to another; a unit that throws fails its job, and it is retried until its attempts are spent; a
 * job keel will not work on fails at once. While it works, the worker renews its jobs' leases and
 * sweeps the queue for the jobs of workers whose session ended.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { BaseStore } from "@langchain/langgraph";
import { analyzeUnit } from "../analyst/analyze-unit.js";
import { AnalystContextSchema } from "../analyst/context.js";
import { ManifestError } from "../analyst/manifest.js";
import { profileOf } from "../run/profile-use.js";
import { AnalysisRecords, type UnitRecord } from "../analyst/records.js";
import { analystEnv } from "../analyst/runtime.js";
import { factsOf } from "../analyst/structure.js";
import { ModelServerError } from "../models/errors.js";
import { resolveDeps, type GraphDeps } from "../run/model.js";
import { BadJobError, checkUnitJob, sha1, type UnitJob, type UnitOutcome } from "./jobs.js";
import { SERVER_DOWN_KINDS, ServerPool, type ModelServer } from "./pool.js";
import type { HeldJob, Holder, UnitQueue } from "./queue.js";
import { jobConfig, type WorkerFlags } from "./worker-settings.js";

export interface WorkerOptions {
  queue: UnitQueue;
  store: BaseStore;
  servers: ModelServer[];
  /** The worker's session: who holds the jobs it takes (worker-session.ts). */
  session: { readonly name: string; current(): Holder | undefined };
  /** The model to ask; default the model of each job (the coordinator's). */
  model?: string;
  /** Units analysed at once (default: one per server). */
  concurrency?: number;
  /** The worker's own settings (its flags): retries, window, API key… */
  settings?: WorkerFlags;
  /** How long to wait when the queue is empty, ms. */
  pollMs?: number;
  /** How often to look for the jobs of workers that died, ms (default 10 s). */
  sweepMs?: number;
  /** Stop taking units; the ones in hand finish. */
  stop: AbortSignal;
  /** Stop now: the units in hand go back to the queue when the session ends. */
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

/**
 * A stored record that already answers this job: same text (its key), model and depth, and a
 * finding — as the coordinator reuses them; a record without one is asked again, as in one process.
 */
export function answers(r: UnitRecord | undefined, j: UnitJob, model: string): boolean {
  return Boolean(r && r.model === model && r.depth === j.depth && r.finding);
}

/** What a worker knows of a run: its analysis, target and the hash of each listed file. */
interface RunView {
  analysis: string;
  target: string;
  hashes: Map<string, string>;
  paths: ReadonlySet<string>;
}

/**
 * The run's manifest as the worker checks jobs against it (read once per analysis; a few runs
 * kept). A job is refused unless its analysis is the run's and its text has the listed hash.
 */
function runViews(store: BaseStore) {
  const views = new Map<string, Promise<RunView>>();
  const read = async (run: string): Promise<RunView> => {
    const m = await AnalysisRecords.manifest(store, run).catch((err: unknown) => {
      if (!(err instanceof ManifestError)) throw err;
      throw new BadJobError(`the job's run has no usable manifest: ${err.message}`);
    });
    return {
      analysis: m.id,
      target: m.target,
      hashes: new Map(m.files.map((f) => [f.path, f.hash])),
      paths: new Set(m.files.map((f) => f.path)),
    };
  };
  return async (job: UnitJob): Promise<RunView> => {
    const cached = views.get(job.run);
    let view = cached ? await cached.catch(() => undefined) : undefined;
    if (view?.analysis !== job.analysis) {
      const fresh = read(job.run);
      views.delete(job.run);
      views.set(job.run, fresh);
      if (views.size > 4) views.delete(views.keys().next().value!);
      view = await fresh.catch((err: unknown) => {
        views.delete(job.run);
        throw err;
      });
    }
    if (view.analysis !== job.analysis)
      throw new BadJobError(
        `the job is of analysis ${job.analysis}, but run ${job.run} is analysis ${view.analysis} now (a job of an earlier listing, or not its coordinator's): refused`,
      );
    const listed = view.hashes.get(job.unit.path);
    const hash = sha1(job.text);
    if (listed === undefined || listed !== hash || job.unit.hash !== hash)
      throw new BadJobError(
        `the job's text for ${job.unit.path} is not the text run ${job.run} listed (${listed === undefined ? "no such file" : "another hash"}): refused, nothing analysed`,
      );
    return view;
  };
}

/** What a worker's slots share while it runs (see `runWorker`). */
interface WorkerRun {
  o: WorkerOptions;
  now: () => number;
  log: (line: string) => void;
  pool: ServerPool;
  deps: ReturnType<typeof resolveDeps>;
  summary: WorkerSummary;
  viewOf: ReturnType<typeof runViews>;
  /** The lease lengths of the units taken, for the renewals' pace. */
  leases: Set<number>;
  profileFor: (server: ModelServer, model: string) => Promise<Record<string, unknown>>;
}

/** Runs until `stop`; resolves with what this worker did. */
export async function runWorker(o: WorkerOptions): Promise<WorkerSummary> {
  const w: WorkerRun = {
    o,
    now: o.now ?? Date.now,
    log: o.log ?? (() => undefined),
    pool: new ServerPool(o.servers),
    deps: resolveDeps(o.deps ?? {}),
    summary: { worker: o.session.name, analyzed: 0, duplicates: 0, failed: 0 },
    viewOf: runViews(o.store),
    leases: new Set<number>(),
    profileFor: profileCache(),
  };
  const upkeep = new AbortController();
  const timers = upkeepLoops(w, upkeep.signal);
  try {
    await Promise.all(Array.from({ length: o.concurrency ?? o.servers.length }, () => slot(w)));
  } finally {
    upkeep.abort();
    await Promise.all(timers);
  }
  return w.summary;
}

/** The model's calibration profile on a server (once per server and model), beneath the worker's settings. */
function profileCache(): WorkerRun["profileFor"] {
  const profiles = new Map<string, Promise<Record<string, unknown>>>();
  return (server, model) => {
    const key = `${server.provider}|${server.url}|${model}`;
    let found = profiles.get(key);
    if (!found) {
      const where =
        server.provider === "openai" ? { baseUrl: server.url } : { ollamaUrl: server.url };
      found = profileOf(AnalystContextSchema, { model, provider: server.provider, ...where }).then(
        (p) => p.beneath,
      );
      profiles.set(key, found);
    }
    return found;
  };
}

/** The unit's finding from the first server that answers; a failing server leaves rotation. */
async function analyse(w: WorkerRun, job: UnitJob, model: string, facts: UnitRecord["facts"]) {
  const { o, now, pool, log } = w;
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
      const config = jobConfig(
        job.run,
        o.settings ?? {},
        { model, depth: job.depth, provider: server.provider, url: server.url },
        await w.profileFor(server, model),
      );
      const env = analystEnv({ ...config, store: o.store, signal: o.abort }, w.deps);
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
      log(`server ${server.url} out of rotation: ${err.message}`);
      // Every server failed on this unit twice: the unit, not the servers, is the likely cause.
      if (++serverErrors >= 2 * o.servers.length) throw err;
    }
  }
}

/** Analyses one job taken from the queue and completes it (or fails it with the reason). */
async function handle(w: WorkerRun, held: HeldJob, holder: Holder): Promise<void> {
  const { o, now, log, summary } = w;
  const started = now();
  const outcome = (result?: UnitOutcome["result"], server?: string, modelMs?: number) => ({
    worker: o.session.name,
    ms: now() - started,
    ...(result ? { result } : {}),
    ...(server ? { server } : {}),
    ...(modelMs !== undefined ? { modelMs } : {}),
  });
  try {
    const job = checkUnitJob(held.data);
    const view = await w.viewOf(job);
    const model = o.model ?? job.model;
    const records = new AnalysisRecords(o.store, view.target);
    if (answers(await records.unit(job.unit.path, job.unit.hash), job, model)) {
      summary.duplicates++;
      await o.queue.complete(held.id, holder, outcome("duplicate"));
      return;
    }
    const facts = await factsOf(job.unit, job.text, view.paths);
    const { finding, server, modelMs } = await analyse(w, job, model, facts);
    const record: UnitRecord = {
      path: job.unit.path,
      hash: sha1(job.text),
      facts,
      model,
      depth: job.depth,
      ...(finding
        ? { finding }
        : { failed: "the model's answer did not match the finding schema twice" }),
    };
    // Another worker may have finished this unit meanwhile (this one's session lapsed): write once.
    const wrote = !answers(await records.unit(record.path, record.hash), job, model);
    if (wrote) await records.putUnit(record);
    const done = await o.queue.complete(held.id, holder, {
      ...outcome(wrote ? "analyzed" : "duplicate", server, modelMs),
      finding: Boolean(finding),
    });
    if (wrote) summary.analyzed++;
    else summary.duplicates++;
    log(
      `${job.unit.path}: ${wrote ? (finding ? "analysed" : "no usable finding") : "already there"} on ${server} in ${now() - started} ms${done ? "" : " (the job had been taken over)"}`,
    );
  } catch (err) {
    if (o.abort?.aborted) return; // goes back to the queue with the session
    summary.failed++;
    const error = (err as Error).message;
    const bad = err instanceof BadJobError;
    log(`unit ${bad ? "refused" : `failed (attempt ${held.retryCount + 1})`}: ${error}`);
    await o.queue
      .fail(held.id, holder, { ...outcome(), error }, bad)
      .catch((e: unknown) => log(`cannot fail the job: ${(e as Error).message}`));
  }
}

/** One slot: takes a unit when the worker's session and a server are there, handles it, again. */
async function slot(w: WorkerRun): Promise<void> {
  const { o, now, log, pool } = w;
  while (!o.stop.aborted) {
    const holder = o.session.current();
    const wait = pool.nextUp(now());
    if (!holder || wait > 0) {
      await sleep(Math.min(wait > 0 ? wait - now() : Infinity, o.pollMs ?? 500), o.stop);
      continue;
    }
    let held: HeldJob | undefined;
    try {
      held = await o.queue.take(holder);
    } catch (err) {
      log(`cannot take a unit: ${(err as Error).message}`);
      await sleep(2000, o.stop);
      continue;
    }
    if (!held) {
      await sleep(o.pollMs ?? 500, o.stop);
      continue;
    }
    w.leases.add(held.leaseSeconds);
    await handle(w, held, holder);
  }
}

/** The worker's upkeep until `signal`: its leases renewed (it is alive), lapsed sessions swept. */
function upkeepLoops(w: WorkerRun, signal: AbortSignal): Array<Promise<void>> {
  const { o, log, leases } = w;
  const every = (ms: () => number, tick: () => Promise<void>) =>
    repeat(signal, ms, () =>
      tick().catch((err: unknown) => log(`upkeep: ${(err as Error).message}`)),
    );
  return [
    // the leases of units in hand start again a few times per lease; also says the worker is alive
    every(
      () => Math.min(30_000, (Math.min(...leases, 90) * 1000) / 3),
      async () => {
        const h = o.session.current();
        if (h) await o.queue.renew(h);
      },
    ),
    every(
      () => o.sweepMs ?? 10_000,
      async () => {
        for (const s of await o.queue.sweep())
          log(`a unit of ${s.worker} is back on the queue: its session ended`);
      },
    ),
  ];
}

/** Runs `tick` every `everyMs()` until `signal` (`tick` must not throw). */
async function repeat(
  signal: AbortSignal,
  everyMs: () => number,
  tick: () => Promise<void>,
): Promise<void> {
  while (!signal.aborted) {
    await sleep(everyMs(), signal);
    if (!signal.aborted) await tick();
  }
}
