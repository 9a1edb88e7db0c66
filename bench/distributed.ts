/**
 * `npm run bench:distributed`: the distributed analyst's figures side by side, on a throwaway
 * PostgreSQL that counts statements. Needs `npm run build` (it runs the built CLI) and Debian's
 * postgresql. Writes bench/distributed.json.
 *
 * - Scaling: 1, 2, 4 and 8 `keel worker` processes, each with its own fake model server answering
 *   every request after a fixed latency (so the model, not this machine's CPU, is the limit), on
 *   the same generated codebase. Units/s over the span from the first unit taken to the last
 *   completed (database clock), against linear.
 * - The queue's cost per unit, from that run's database: statements by kind (pg_stat_statements)
 *   and rows written by table (pg_stat_user_tables).
 * - A worker killed with SIGKILL holding a unit, with the default settings: seconds until its unit
 *   is back on the queue and until it runs on another worker.
 */
import { cpSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startFakeOllama, type FakeOllama, type Script } from "../src/testing/fake-ollama/index.js";
import { analystScript } from "../src/testing/script.js";
import { generateRepo } from "../test/support/fixture-repo.js";
import {
  database,
  keel,
  per,
  rowsWritten,
  sql,
  startCountingPostgres,
  statementsOf,
} from "./distributed-support.js";
import { benchTemp } from "./temp.js";

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const LATENCY_MS = arg("latency", 1000);
const UNITS = arg("units", 120);
const WORKERS = [1, 2, 4, 8];
const KILLS = arg("kills", 3);

const tmp = (p: string) => realpathSync(benchTemp(p));
const slowScript = (ms: number): Script => {
  const scripted = analystScript();
  return async (req) => ({ ...(await scripted(req)), delayMs: ms });
};

/** `keel analyze --workers` with the default settings on a copy of `repo`; throws if it fails. */
async function analyzeCopy(repo: string, url: string, coordinator: FakeOllama, what: string) {
  const target = tmp("keel-bench-dist-");
  cpSync(repo, target, { recursive: true });
  const args = ["analyze", target, "--postgres", url, "--workers", "--ollama-url", coordinator.url];
  const r = await keel([...args, "--json"]).done;
  if (r.code !== 0) throw new Error(`analyze ${what} failed: ${r.err}`);
}

/** One analysis with `n` workers (one server each); its span, rate and the queue's cost. */
async function scaling(base: string, repo: string, coordinator: FakeOllama, n: number) {
  const url = await database(base, `bench_dist_${n}`);
  await sql(base, "SELECT pg_stat_statements_reset()");
  const servers = await Promise.all(
    Array.from({ length: n }, () => startFakeOllama({ script: slowScript(LATENCY_MS) })),
  );
  const workers = servers.map((s, i) =>
    keel(["worker", "--postgres", url, "--server", s.url, "--name", `w${i + 1}`, "--json"]),
  );
  await analyzeCopy(repo, url, coordinator, `with ${n} workers`);
  for (const w of workers) w.child.kill("SIGTERM");
  await Promise.all(workers.map((w) => w.done));
  await Promise.all(servers.map((s) => s.close()));
  const [f] = await sql<{ units: string; span: string; ms: string; model: string }>(
    url,
    `SELECT count(*)::text AS units,
            (extract(epoch FROM max(completed_on) - min(started_on)) * 1000)::text AS span,
            avg((output->>'ms')::float)::text AS ms, avg((output->>'modelMs')::float)::text AS model
       FROM keel_queue.job WHERE state = 'completed'`,
  );
  const units = Number(f!.units);
  const span = Number(f!.span);
  const inWorkerMs = Number(f!.ms);
  return {
    row: {
      workers: n,
      units,
      model_requests: servers.reduce((a, s) => a + s.chatRequests().length, 0),
      seconds: span / 1000,
      units_per_s: units / (span / 1000),
      model_ms_per_unit: Number(f!.model),
      worker_other_ms_per_unit: inWorkerMs - Number(f!.model),
      // a worker runs one unit at a time here: the rest of its wall time per unit is the queue's
      queue_ms_per_unit: (span * n) / units - inWorkerMs,
    },
    statements: per(await statementsOf(base, url), units),
    rows: per(await rowsWritten(url), units),
  };
}

/** Waits until `ready()` says so, polling every 100 ms. */
async function until(ready: () => Promise<boolean>): Promise<void> {
  while (!(await ready())) await new Promise((r) => setTimeout(r, 100));
}

/**
 * A worker killed holding a unit, the default settings: seconds from the kill until the unit is
 * back on the queue and until it runs on another worker (which has room for it by then).
 */
async function killOne(base: string, repo: string, coordinator: FakeOllama, round: number) {
  const url = await database(base, `bench_kill_${round}`);
  const victimServer = await startFakeOllama({ script: slowScript(4000) });
  const otherServer = await startFakeOllama({ script: slowScript(1000) });
  const worker = (name: string, server: FakeOllama, extra: string[] = []) =>
    keel(["worker", "--postgres", url, "--server", server.url, "--name", name, ...extra]);
  const victim = worker("victim", victimServer);
  const holding = new Promise<void>((r) => victimServer.onChat(() => r()));
  const analysis = analyzeCopy(repo, url, coordinator, "with a killed worker");
  await holding;
  // the survivor starts once the victim holds a unit, with room for every unit of the run
  const other = worker("survivor", otherServer, ["--concurrency", "32"]);
  await until(
    async () =>
      (
        await sql<{ n: string }>(
          url,
          "SELECT count(*)::text AS n FROM keel_queue.keel_worker WHERE name = 'survivor'",
        )
      )[0]!.n === "1",
  );
  const killedAt = Date.now();
  victim.child.kill("SIGKILL");
  await analysis;
  other.child.kill("SIGTERM");
  await Promise.all([victim.done, other.done, victimServer.close(), otherServer.close()]);
  const [j] = await sql<{ back: string; running: string }>(
    url,
    // the sweep sets start_after one second (the retry delay) after it failed the job into retry
    `SELECT (extract(epoch FROM start_after - interval '1 second') * 1000)::bigint::text AS back,
            (extract(epoch FROM started_on) * 1000)::bigint::text AS running
       FROM keel_queue.job WHERE retry_count > 0`,
  );
  return {
    back_on_queue_s: (Number(j!.back) - killedAt) / 1000,
    running_elsewhere_s: (Number(j!.running) - killedAt) / 1000,
  };
}

async function main() {
  const pg = await startCountingPostgres();
  const repo = tmp("keel-bench-dist-repo-");
  generateRepo(repo, UNITS);
  const small = tmp("keel-bench-kill-repo-");
  generateRepo(small, 16);
  const coordinator = await startFakeOllama({ script: analystScript() });
  const runs: Array<Awaited<ReturnType<typeof scaling>>> = [];
  const kills: Array<Awaited<ReturnType<typeof killOne>>> = [];
  try {
    for (const n of WORKERS) {
      runs.push(await scaling(pg.url, repo, coordinator, n));
      console.log(JSON.stringify(runs.at(-1)));
    }
    for (let i = 0; i < KILLS; i++) {
      kills.push(await killOne(pg.url, small, coordinator, i));
      console.log(JSON.stringify(kills.at(-1)));
    }
  } finally {
    await coordinator.close();
    pg.stop();
  }
  const rows = runs.map((r) => r.row);
  const one = rows[0]!.units_per_s;
  const table = rows.map((r) => ({ ...r, scaling_vs_linear: r.units_per_s / (one * r.workers) }));
  const round = (o: Record<string, number>) =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Math.round(v * 100) / 100]));
  console.log(
    `distributed analyst: ${UNITS} units, fake servers answering after ${LATENCY_MS} ms, one server per worker`,
  );
  console.table(table.map(round));
  console.log("the queue's cost per unit (2 workers): statements by kind, rows written by table");
  console.table(runs[1]!.statements);
  console.table(runs[1]!.rows);
  console.log(
    "a worker killed with SIGKILL holding a unit (default settings), seconds after the kill:",
  );
  console.table(kills.map(round));
  writeFileSync(
    path.resolve(import.meta.dirname, "distributed.json"),
    `${JSON.stringify(
      {
        latencyMs: LATENCY_MS,
        units: UNITS,
        rows: table,
        perUnit: runs.map((r) => ({
          workers: r.row.workers,
          statements: r.statements,
          rows: r.rows,
        })),
        kills,
      },
      null,
      2,
    )}\n`,
  );
}

await main();
