/**
 * `npm run bench:distributed`: the distributed analyst's throughput with 1, 2 and 4 `keel worker`
 * processes, each with its own fake model server answering every request after a fixed latency
 * (so the model, not this machine's CPU, is the limit), on a throwaway PostgreSQL. Per run: units/s
 * over the span from the first unit taken to the last completed (database clock), the scaling
 * against linear, and per unit the model's time next to the queue's overhead. Writes
 * bench/distributed.json. Needs `npm run build` (it runs the built CLI) and Debian's postgresql.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startFakeOllama, type FakeOllama, type Script } from "../src/testing/fake-ollama/index.js";
import { analystScript } from "../src/testing/script.js";
import { generateRepo } from "../test/support/fixture-repo.js";
import startPostgres from "../test/support/postgres.js";
import { openQueue } from "../src/distributed/queue.js";
import type { UnitJob } from "../src/distributed/jobs.js";
import { benchTemp } from "./temp.js";

const KEEL = path.resolve(import.meta.dirname, "../dist/cli/main.js");
const LATENCY_MS = Number(process.argv.find((a) => a.startsWith("--latency="))?.slice(10) ?? 1000);
const UNITS = Number(process.argv.find((a) => a.startsWith("--units="))?.slice(8) ?? 60);
const WORKERS = [1, 2, 4];
/** Queue depths for the queue-alone figures: the coordinator's window (1,000) and 20 times it. */
const DEPTHS = [1000, 20000];

/**
 * The queue alone, without a model: enqueue `depth` units of 1 KB, then 8 takers in this
 * process take and complete 1,000 of them as fast as they can; the coordinator's two polls timed
 * against that table. What 100 workers and a million files would ask of Postgres.
 */
async function queueAtScale(url: string, depth: number) {
  const queue = await openQueue(url);
  const text = "x".repeat(1024);
  const jobs: UnitJob[] = Array.from({ length: depth }, (_, i) => ({
    v: 1,
    run: "scale",
    target: "/scale",
    unit: { path: `f${i}.ts`, hash: `h${i}`, bytes: 1024, lines: 1, language: "ts" },
    model: "m",
    depth: "quick",
    text,
  }));
  let t = performance.now();
  await queue.enqueue(jobs, 600);
  const enqueuePerS = depth / ((performance.now() - t) / 1000);
  const since = await queue.dbNow();
  const TAKE = 1000;
  let taken = 0;
  t = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (taken < TAKE) {
        taken++;
        const job = await queue.take();
        if (job) await queue.complete(job.id, { worker: "bench", result: "analyzed" });
      }
    }),
  );
  const takeCompletePerS = TAKE / ((performance.now() - t) / 1000);
  t = performance.now();
  const finished = await queue.finishedSince("scale", since - 1000);
  const pollMs = performance.now() - t;
  t = performance.now();
  await queue.census("scale");
  const censusMs = performance.now() - t;
  await queue.close();
  return {
    jobs: depth,
    enqueue_per_s: enqueuePerS,
    take_and_complete_per_s: takeCompletePerS,
    coordinator_poll_ms: pollMs,
    coordinator_poll_rows: finished.length,
    census_ms: censusMs,
  };
}

const tmp = (p: string) => realpathSync(benchTemp(p));

function keel(args: string[]): {
  child: ChildProcess;
  done: Promise<{ code: number | null; out: string; err: string }>;
} {
  const child = spawn(process.execPath, [KEEL, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  return {
    child,
    done: new Promise((resolve) => child.on("close", (code) => resolve({ code, out, err }))),
  };
}

async function sql<R>(url: string, text: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows as R[];
  } finally {
    await c.end();
  }
}

async function main() {
  let base = "";
  const stopPg = await startPostgres({
    provide: (_k: string, v: string) => (base = v),
  } as unknown as TestProject);
  const repo = tmp("keel-bench-dist-repo-");
  generateRepo(repo, UNITS);
  const scripted = analystScript();
  const slow: Script = async (req) => ({ ...(await scripted(req)), delayMs: LATENCY_MS });
  const coordinatorModel = await startFakeOllama({ script: scripted });
  const rows: Array<Record<string, number>> = [];
  const scale: Array<Record<string, number>> = [];
  try {
    for (const n of WORKERS) {
      const db = `bench_dist_${n}_${Date.now()}`;
      await sql(base, `CREATE DATABASE ${db}`);
      const url = base.replace(/\/keel$/, `/${db}`);
      const servers: FakeOllama[] = await Promise.all(
        Array.from({ length: n }, () => startFakeOllama({ script: slow })),
      );
      const workers = servers.map((s, i) =>
        keel(["worker", "--postgres", url, "--server", s.url, "--name", `w${i + 1}`, "--json"]),
      );
      const target = tmp("keel-bench-dist-");
      cpSync(repo, target, { recursive: true });
      const run = keel([
        "analyze",
        target,
        "--postgres",
        url,
        "--workers",
        "--ollama-url",
        coordinatorModel.url,
        "--lease",
        "120",
        "--json",
      ]);
      const r = await run.done;
      if (r.code !== 0) throw new Error(`analyze with ${n} workers failed: ${r.err}`);
      for (const w of workers) w.child.kill("SIGTERM");
      await Promise.all(workers.map((w) => w.done));
      await Promise.all(servers.map((s) => s.close()));
      const [f] = await sql<{
        units: string;
        span: string;
        ms: string;
        model: string;
        requests: string;
      }>(
        url,
        `SELECT count(*)::text AS units,
                (extract(epoch FROM max(completed_on) - min(started_on)) * 1000)::text AS span,
                avg((output->>'ms')::float)::text AS ms, avg((output->>'modelMs')::float)::text AS model
           FROM keel_queue.job WHERE state = 'completed'`,
      );
      const units = Number(f!.units);
      const span = Number(f!.span);
      const requests = servers.reduce((a, s) => a + s.chatRequests().length, 0);
      const modelMs = Number(f!.model);
      const inWorkerMs = Number(f!.ms);
      // A worker runs one unit at a time here. Its wall time per unit splits into the model's
      // time, the worker's own work beside it (facts, store read and write) and the queue's share
      // (take, complete, and any wait for the next unit).
      const wallPerUnit = (span * n) / units;
      rows.push({
        workers: n,
        units,
        model_requests: requests,
        seconds: span / 1000,
        units_per_s: units / (span / 1000),
        model_ms_per_unit: modelMs,
        worker_other_ms_per_unit: inWorkerMs - modelMs,
        queue_ms_per_unit: wallPerUnit - inWorkerMs,
      });
    }
    for (const depth of DEPTHS) {
      const db = `bench_scale_${depth}_${Date.now()}`;
      await sql(base, `CREATE DATABASE ${db}`);
      scale.push(await queueAtScale(base.replace(/\/keel$/, `/${db}`), depth));
    }
  } finally {
    await coordinatorModel.close();
    stopPg();
  }
  const one = rows[0]!.units_per_s!;
  for (const r of rows) r.scaling_vs_linear = r.units_per_s! / (one * r.workers!);
  const round = (x: number) => Math.round(x * 100) / 100;
  console.log(
    `distributed analyst: ${UNITS} units, fake servers answering after ${LATENCY_MS} ms, one server per worker`,
  );
  console.table(
    rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, round(v)]))),
  );
  console.log("the queue alone (jobs of 1 KB queued, 8 takers in one process, no model):");
  console.table(
    scale.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, round(v)]))),
  );
  writeFileSync(
    path.resolve(import.meta.dirname, "distributed.json"),
    `${JSON.stringify({ latencyMs: LATENCY_MS, units: UNITS, rows, queueAtScale: scale }, null, 2)}\n`,
  );
}

await main();
