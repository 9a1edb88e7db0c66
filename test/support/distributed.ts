/**
 * What the distributed analyst's tests share: a fresh database per test on the run's PostgreSQL,
 * fake model servers with a latency, `keel worker` and `keel analyze --workers` processes, the
 * queue's and the store's ledger, and the report to compare with a single process's.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { inject } from "vitest";
import type { FakeOllama, Script } from "../../src/testing/fake-ollama/index.js";
import { analystScript } from "../../src/testing/script.js";
import { runKeel, type CliResult } from "./cli.js";
import { query } from "./pg.js";

let dbs = 0;
/** A new empty database on the run's PostgreSQL; its URL. */
export async function freshDb(name: string): Promise<string> {
  const url = inject("pgUrl");
  const db = `${name}_${process.pid}_${Date.now()}_${++dbs}`.toLowerCase();
  await query(url, `CREATE DATABASE ${db}`);
  return url.replace(/\/keel$/, `/${db}`);
}

export { query };

/**
 * The single-process report of `dir` against a fake model at `modelUrl`, with the checkpoints
 * outside the folder (as in a Postgres run: no .keel folder exists when it is listed).
 */
export async function singleProcessReport(
  dir: string,
  modelUrl: string,
  checkpoints: string,
): Promise<Record<string, unknown>> {
  const r = await runKeel([
    "analyze",
    dir,
    "--ollama-url",
    modelUrl,
    "--checkpoints",
    `sqlite:${checkpoints}`,
    "--json",
  ]);
  if (r.code !== 0) throw new Error(`the single-process analysis failed: ${r.stderr}`);
  return reportOf(dir);
}

/** `n` fake servers answering like the analyst's model, each request after `delayMs`. */
export async function slowServers(
  start: (o: { script: Script }) => Promise<FakeOllama>,
  n: number,
  delayMs: number,
): Promise<FakeOllama[]> {
  const scripted = analystScript();
  const slow: Script = async (req) => ({ ...(await scripted(req)), delayMs });
  return Promise.all(Array.from({ length: n }, () => start({ script: slow })));
}

export interface Worker {
  name: string;
  child?: ChildProcess;
  done: Promise<CliResult>;
}

/** A `keel worker` on `urls`, with the default settings but a short poll. */
export function worker(url: string, name: string, urls: string[]): Worker {
  const w: Worker = { name } as Worker;
  w.done = runKeel(
    [
      "worker",
      "--postgres",
      url,
      ...urls.flatMap((u) => ["--server", u]),
      "--name",
      name,
      "--poll-ms",
      "100",
      "--retries",
      "0",
      "--json",
    ],
    { onSpawn: (c) => (w.child = c) },
  );
  return w;
}

export async function stopAll(ws: Worker[]): Promise<CliResult[]> {
  for (const w of ws) w.child?.kill("SIGTERM");
  return Promise.all(ws.map((w) => w.done));
}

/** `keel analyze DIR --postgres URL --workers` with the default settings. */
export const analyzeArgs = (dir: string, url: string, fake: FakeOllama, extra: string[] = []) => [
  "analyze",
  dir,
  "--postgres",
  url,
  "--workers",
  "--ollama-url",
  fake.url,
  "--json",
  ...extra,
];

/** The JSON report of a folder, its name left out (copies have different names). */
export const reportOf = (dir: string) => ({
  ...(JSON.parse(readFileSync(path.join(dir, ".keel/report.json"), "utf8")) as Record<
    string,
    unknown
  >),
  name: "fixture",
});

/** What the queue holds per state, and how many units' findings the store holds. */
export async function ledger(url: string) {
  const jobs = await query<{ state: string; n: string; retried: string }>(
    url,
    "SELECT state::text, count(*)::text AS n, count(*) FILTER (WHERE retry_count > 0)::text AS retried FROM keel_queue.job GROUP BY state",
  );
  const keys = await query<{ n: string }>(
    url,
    "SELECT count(*)::text AS n FROM keel_queue.job GROUP BY singleton_key HAVING count(*) > 1",
  );
  const items = await query<{ n: string; keys: string }>(
    url,
    "SELECT count(*)::text AS n, count(DISTINCT key)::text AS keys FROM store WHERE key LIKE 'unit:%'",
  );
  return {
    states: Object.fromEntries(jobs.map((r) => [r.state, Number(r.n)])),
    retried: jobs.reduce((a, r) => a + Number(r.retried), 0),
    /** Units with more than one job: sent twice. */
    sentTwice: keys.length,
    findings: Number(items[0]!.n),
    distinctFindings: Number(items[0]!.keys),
  };
}
