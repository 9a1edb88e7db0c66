/**
 * What the distributed benches share: a throwaway PostgreSQL that counts statements
 * (pg_stat_statements), a database per run, `keel` processes of the built CLI, and the queue's
 * cost read back from the server's own statistics.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { query as sql } from "../test/support/pg.js";
import startPostgres from "../test/support/postgres.js";

export { sql };

export const KEEL = path.resolve(import.meta.dirname, "../dist/cli/main.js");

/** Starts the cluster with pg_stat_statements; its base URL and how to stop it. */
export async function startCountingPostgres(): Promise<{ url: string; stop: () => void }> {
  let url = "";
  const stop = await startPostgres(
    { provide: (_k: string, v: string) => (url = v) } as unknown as TestProject,
    [
      "shared_preload_libraries=pg_stat_statements",
      "pg_stat_statements.track=all",
      "pg_stat_statements.max=10000",
    ],
  );
  await sql(url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  return { url, stop };
}

/** A new database on the cluster; its URL. */
export async function database(base: string, name: string): Promise<string> {
  const db = `${name}_${Date.now()}`;
  await sql(base, `CREATE DATABASE ${db}`);
  return base.replace(/\/keel$/, `/${db}`);
}

export interface Keel {
  child: ChildProcess;
  done: Promise<{ code: number | null; out: string; err: string }>;
}

/** Runs the built keel command. */
export function keel(args: string[]): Keel {
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

/** What a statement is, from its text: the queue's own, the store's, the checkpoints', pg-boss's. */
export function statementKind(q: string): string {
  const kinds: Array<[RegExp, string]> = [
    [/WITH next AS/, "take"],
    // pg_stat_statements shows constants as $n: a completion sets completed_on first
    [/WITH changed AS[\s\S]*SET completed_on = now\(\)/, "complete"],
    [/WITH changed AS/, "fail"],
    [/WITH renewed AS/, "renew"],
    [/WITH dead AS/, "sweep"],
    [/json_to_recordset/, "enqueue"],
    [/FROM ONLY "keel_queue"\."queue" x/, "enqueue (its foreign key check)"],
    [/completed_on >= to_timestamp/, "coordinator poll"],
    [/completed_on IS NULL/, "coordinator census"],
    [/FROM keel_queue\.keel_worker w/, "workers' health"],
    [/data->>'analysis' = \$2$/m, "coordinator start"],
    [/keel_worker/, "worker session"],
    [/pg_try_advisory_lock|pg_advisory_lock|pg_advisory_unlock/, "locks"],
    [/^\s*SELECT[\s\S]*FROM ("?public"?\.)?"?store"?/, "store read"],
    [/(INTO|UPDATE) ("?public"?\.)?"?store"?/, "store write"],
    [/store/, "store (other)"],
    [/checkpoint/, "checkpoints"],
    [/keel_queue\./, "pg-boss"],
  ];
  return kinds.find(([re]) => re.test(q))?.[1] ?? "other";
}

/** Statements run on a database since the counters were reset, by kind (pg_stat_statements). */
export async function statementsOf(base: string, url: string): Promise<Record<string, number>> {
  const db = new URL(url).pathname.slice(1);
  const rows = await sql<{ query: string; calls: string }>(
    base,
    `SELECT query, calls::text FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)`,
    [db],
  );
  const out: Record<string, number> = {};
  for (const r of rows) {
    const k = statementKind(r.query);
    out[k] = (out[k] ?? 0) + Number(r.calls);
    if (k === "other" && Number(r.calls) > 10)
      console.error(
        `other statement, ${r.calls} calls: ${r.query.replace(/\s+/g, " ").slice(0, 120)}`,
      );
  }
  return out;
}

/** Rows inserted, updated and deleted per table of a database (after its sessions ended). */
export async function rowsWritten(url: string): Promise<Record<string, number>> {
  await new Promise((r) => setTimeout(r, 1500)); // sessions flush their counts within a second
  const rows = await sql<{ t: string; n: string }>(
    url,
    `SELECT CASE WHEN schemaname = 'keel_queue' AND relname LIKE 'j%' THEN 'queue jobs'
                 WHEN schemaname = 'keel_queue' THEN 'queue ' || relname ELSE relname END AS t,
            sum(n_tup_ins + n_tup_upd + n_tup_del)::text AS n
       FROM pg_stat_user_tables GROUP BY 1`,
  );
  return Object.fromEntries(rows.filter((r) => r.n !== "0").map((r) => [r.t, Number(r.n)]));
}

/** Each value divided by `n`, two decimals. */
export const per = (o: Record<string, number>, n: number) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Math.round((v / n) * 100) / 100]));
