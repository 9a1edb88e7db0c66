/**
 * `npm run bench:queue-scale [-- --rows=1000000 --units=20000 --takers=8 --window=1000]`: the
 * queue alone at a million units, no model, on a throwaway PostgreSQL.
 *
 * A run of `units` goes through keel's own queue code as a coordinator sends them (a window ahead
 * of the completions, its poll every 250 ms, its census and sweep every 5 s) while `takers`
 * workers (each with its own session and lock) take and complete them as fast as they can: its
 * rate, the coordinator's poll time, the statements per unit. It runs twice: on an empty queue,
 * and after `rows` jobs of another analysis were enqueued (the coordinator's own statement,
 * timed) and completed (one statement per 10,000, timed), as a million-file analysis leaves them.
 * Then, at that size: the table on disk, a `--status` census, a restarted coordinator's first
 * read. Writes bench/queue-scale.json.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { JOB_FORMAT, type UnitJob } from "../src/distributed/jobs.js";
import { openQueue, type UnitQueue } from "../src/distributed/queue.js";
import { WorkerSession } from "../src/distributed/worker-session.js";
import { database, per, sql, startCountingPostgres, statementsOf } from "./distributed-support.js";

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const ROWS = arg("rows", 1_000_000);
const UNITS = arg("units", 20_000);
const TAKERS = arg("takers", 8);
const WINDOW = arg("window", 1000);
const TEXT = "x".repeat(arg("text", 2048));

const job = (analysis: string, i: number): { data: UnitJob; key: string } => ({
  key: `${analysis}:${i}`,
  data: {
    v: JOB_FORMAT,
    run: `${analysis}-run`,
    analysis,
    unit: { path: `f${i}.ts`, hash: "0".repeat(40), bytes: TEXT.length, lines: 1, language: "ts" },
    model: "m",
    depth: "quick",
    text: TEXT,
  },
});

const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t = performance.now();
  const r = await f();
  return [r, performance.now() - t];
};

/** The job table's size on disk (the queue's partition with its indexes and TOAST), MB. */
async function tableMb(url: string): Promise<number> {
  const [r] = await sql<{ b: string }>(
    url,
    `SELECT sum(pg_total_relation_size(c.oid))::text AS b FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'keel_queue' AND c.relkind = 'r' AND c.relname LIKE 'j%'`,
  );
  return Number(r!.b) / 1e6;
}

/** A worker that takes and completes units, no model, until `done`. */
async function taker(url: string, i: number, done: () => boolean): Promise<number> {
  const queue = await openQueue(url);
  const session = await WorkerSession.open(url, { name: `t${i}`, servers: [] });
  let n = 0;
  try {
    while (!done()) {
      const h = session.current()!;
      const held = await queue.take(h);
      if (!held) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      await queue.complete(held.id, h, { worker: `t${i}`, result: "analyzed" });
      n++;
    }
  } finally {
    await session.close(true);
    await queue.close();
  }
  return n;
}

/** Jobs of an analysis not finished yet. */
async function openCount(queue: UnitQueue, analysis: string): Promise<number> {
  const open = await queue.openOf(analysis);
  return Object.values(open).reduce((a, n) => a + (n ?? 0), 0);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * One analysis of `UNITS` through the queue: the coordinator's window, poll, census and sweep
 * here, `TAKERS` workers taking and completing. Its rate, poll times and statements per unit.
 */
async function analysisRun(base: string, url: string, queue: UnitQueue, analysis: string) {
  await sql(base, "SELECT pg_stat_statements_reset()");
  let finished = false;
  const takers = Array.from({ length: TAKERS }, (_, i) => taker(url, i, () => finished));
  const polls: number[] = [];
  let sent = 0;
  let done = 0;
  let seen = await queue.dbNow();
  let shown = 0;
  const t0 = performance.now();
  while (done < UNITS) {
    const batch = [];
    for (; sent < Math.min(UNITS, done + WINDOW); sent++) batch.push(job(analysis, sent));
    if (batch.length) await queue.enqueue(batch, 900);
    const [rows, ms] = await timed(() => queue.finishedSince(analysis, seen - 1000));
    polls.push(ms);
    for (const f of rows) seen = Math.max(seen, f.finishedAt);
    done = sent - (await openCount(queue, analysis));
    if (performance.now() - shown > 5000) {
      shown = performance.now();
      await queue.sweep();
      await queue.workers();
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const seconds = (performance.now() - t0) / 1000;
  finished = true;
  const taken = (await Promise.all(takers)).reduce((a, n) => a + n, 0);
  return {
    units: UNITS,
    seconds,
    take_and_complete_per_s: taken / seconds,
    coordinator_poll_ms_median: median(polls),
    coordinator_poll_ms_max: Math.max(...polls),
    statements_per_unit: per(await statementsOf(base, url), UNITS),
  };
}

/** `ROWS` jobs of another analysis enqueued as a coordinator sends them, then completed in bulk. */
async function fill(url: string, queue: UnitQueue) {
  const [, enqueueMs] = await timed(async () => {
    for (let i = 0; i < ROWS; i += 10_000)
      await queue.enqueue(
        Array.from({ length: Math.min(10_000, ROWS - i) }, (_, k) => job("million", i + k)),
        900,
      );
  });
  const queuedMb = await tableMb(url);
  const [, completeMs] = await timed(async () => {
    for (;;) {
      const [r] = await sql<{ n: string }>(
        url,
        `WITH c AS (
           UPDATE keel_queue.job SET state = 'completed', started_on = now(), completed_on = now(),
                  output = '{"worker":"bulk","result":"analyzed"}', data = data - 'text'
            WHERE id IN (SELECT id FROM keel_queue.job WHERE state = 'created' LIMIT 10000)
           RETURNING 1) SELECT count(*)::text AS n FROM c`,
      );
      if (r!.n === "0") break;
    }
  });
  await sql(url, "VACUUM ANALYZE keel_queue.job");
  return {
    rows: ROWS,
    enqueue_seconds: enqueueMs / 1000,
    enqueue_per_s: ROWS / (enqueueMs / 1000),
    table_mb_queued: queuedMb,
    complete_seconds: completeMs / 1000,
    table_mb_completed: await tableMb(url),
  };
}

async function main() {
  const pg = await startCountingPostgres();
  try {
    const url = await database(pg.url, "bench_scale");
    const queue = await openQueue(url, { maintenanceSeconds: 30 });
    const empty = await analysisRun(pg.url, url, queue, "first");
    console.log("on an empty queue:", JSON.stringify(empty));
    const filled = await fill(url, queue);
    console.log("a million-file analysis's jobs:", JSON.stringify(filled));
    const full = await analysisRun(pg.url, url, queue, "after");
    console.log(`with ${ROWS} finished jobs beside it:`, JSON.stringify(full));
    const [, censusMs] = await timed(() => queue.census());
    const [, restartMs] = await timed(() => queue.jobsOf("million"));
    const [rows] = await sql<{ n: string; avg: string }>(
      url,
      "SELECT count(*)::text AS n, avg(pg_column_size(j.*))::text AS avg FROM keel_queue.job j",
    );
    await queue.close();
    const result = {
      takers: TAKERS,
      window: WINDOW,
      text_bytes: TEXT.length,
      empty,
      filled,
      full,
      at_size: {
        rows: Number(rows!.n),
        bytes_per_row: Number(rows!.avg),
        table_mb: await tableMb(url),
        status_census_ms: censusMs,
        coordinator_restart_read_ms: restartMs,
      },
      load: loadavg(),
    };
    console.log(JSON.stringify(result, null, 2));
    writeFileSync(
      path.resolve(import.meta.dirname, "queue-scale.json"),
      `${JSON.stringify(result, null, 2)}\n`,
    );
  } finally {
    pg.stop();
  }
}

await main();
