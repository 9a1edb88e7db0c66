/**
 * The unit queue on pg-boss, in its own schema (`keel_queue`) of the Postgres keel already uses:
 * leases (`expireInSeconds`), retries (`retryLimit`), singleton keys (policy `stately`: one queued
 * and one running job per key), and the maintenance that expires leases of dead workers. Opening
 * checks the database first: unreachable, or a queue schema of another version, is a clear error.
 */
import PgBoss from "pg-boss";
import pg from "pg";
import { withoutCredentials } from "../persistence/checkpointer.js";
import { CHECK_SERVER, PersistenceError } from "../persistence/open.js";
import {
  QUEUE_SCHEMA,
  UNIT_ATTEMPTS,
  UNIT_QUEUE,
  unitJobKey,
  type UnitJob,
  type UnitOutcome,
} from "./jobs.js";

/** A job's priority from its unit's size: one step per doubling from 1 KB (pg-boss takes the highest first). */
export const sizePriority = (bytes: number) =>
  Math.max(0, Math.ceil(Math.log2(Math.max(1, bytes) / 1024)));

/** keel's own schema, apart from any pg-boss the database's other users run. */
export const QUEUE_DB_SCHEMA = "keel_queue";

/** The queue in the database is of another version than this keel's. */
export class QueueSchemaError extends PersistenceError {
  override name = "QueueSchemaError";
}

export interface QueueOptions {
  /** Run pg-boss's maintenance here (lease expiry); every process may, pg-boss runs one at a time. */
  maintenanceSeconds?: number;
}

/** A unit job as a worker holds it. */
export interface HeldJob {
  id: string;
  data: unknown;
  retryCount: number;
}

/** A finished (completed or failed) job, as the coordinator reads it. */
export interface FinishedJob {
  key: string;
  path: string;
  state: "completed" | "failed";
  output: UnitOutcome & { value?: { message?: string } };
  finishedAt: number;
}

export type JobState = "created" | "retry" | "active" | "completed" | "cancelled" | "failed";

/** Checks that the database answers and that its queue schema, if any, is this keel's version. */
export async function checkQueueDatabase(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await c.connect();
  } catch (err) {
    await c.end().catch(() => undefined);
    throw new PersistenceError(
      `cannot reach the Postgres database ${withoutCredentials(url)} for the job queue: ${(err as Error).message}. ${CHECK_SERVER}`,
    );
  }
  try {
    const t = await c.query<{ t: string | null }>(
      `SELECT to_regclass('${QUEUE_DB_SCHEMA}.version')::text AS t`,
    );
    if (!t.rows[0]?.t) return;
    const v = await c.query<{ version: string }>(`SELECT version FROM ${QUEUE_DB_SCHEMA}.version`);
    const found = v.rows[0]?.version;
    if (Number(found) !== QUEUE_SCHEMA)
      throw new QueueSchemaError(
        `the job queue in ${withoutCredentials(url)} (schema ${QUEUE_DB_SCHEMA}) is version ${found ?? "unknown"}; this keel uses version ${QUEUE_SCHEMA}. Run workers and coordinator of one keel version, or drop the old queue (DROP SCHEMA ${QUEUE_DB_SCHEMA} CASCADE) when no run is using it.`,
      );
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Opens the queue (creating schema and queue on first use). */
export async function openQueue(url: string, o: QueueOptions = {}): Promise<UnitQueue> {
  await checkQueueDatabase(url);
  try {
    return await retryDeadlock(() => startQueue(url, o));
  } catch (err) {
    throw new PersistenceError(
      `cannot open the job queue in ${withoutCredentials(url)}: ${(err as Error).message}`,
    );
  }
}

/**
 * `open`, tried again when Postgres ends it with "deadlock detected": a coordinator and its
 * workers often open a new database's queue at the same moment, both create pg-boss's tables, and
 * Postgres may end one of the two (seen in keel's own suite). The other's schema is then there; opening again
 * finds it.
 */
export async function retryDeadlock<T>(open: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (err) {
      if (attempt >= attempts || !isDeadlock(err)) throw err;
      await new Promise((r) => setTimeout(r, 100 * attempt + Math.random() * 100));
    }
  }
}

const isDeadlock = (err: unknown) =>
  (err as { code?: string }).code === "40P01" || /deadlock detected/i.test(String(err));

async function startQueue(url: string, o: QueueOptions): Promise<UnitQueue> {
  const boss = new PgBoss({
    connectionString: url,
    schema: QUEUE_DB_SCHEMA,
    max: 4,
    schedule: false,
    supervise: o.maintenanceSeconds !== undefined,
    ...(o.maintenanceSeconds !== undefined
      ? { maintenanceIntervalSeconds: o.maintenanceSeconds }
      : {}),
  });
  const errors: Error[] = [];
  boss.on("error", (err) => errors.push(err));
  try {
    await boss.start();
    await boss.createQueue(UNIT_QUEUE, {
      name: UNIT_QUEUE,
      policy: "stately",
      retryLimit: UNIT_ATTEMPTS - 1,
    });
  } catch (err) {
    await boss.stop({ graceful: false, wait: false }).catch(() => undefined);
    throw err;
  }
  return new UnitQueue(boss, errors);
}

export class UnitQueue {
  constructor(
    private readonly boss: PgBoss,
    /** Errors pg-boss reported in the background (e.g. a lost connection during maintenance). */
    readonly errors: Error[],
  ) {}

  private sql<R>(text: string, values: unknown[] = []): Promise<{ rows: R[] }> {
    return this.boss.getDb().executeSql(text, values);
  }

  /**
   * Sends one job per unit; a unit whose key is already queued is not sent twice. `leaseSeconds`:
   * how long a worker may hold a unit before another may take it. Larger units are taken first
   * (priority by size), so the run does not end waiting on one large file.
   */
  async enqueue(jobs: UnitJob[], leaseSeconds: number): Promise<void> {
    for (let i = 0; i < jobs.length; i += 200)
      await this.boss.insert(
        jobs.slice(i, i + 200).map((data) => ({
          name: UNIT_QUEUE,
          data,
          singletonKey: unitJobKey(data),
          priority: sizePriority(data.unit.bytes),
          retryLimit: UNIT_ATTEMPTS - 1,
          retryDelay: 1,
          expireInSeconds: leaseSeconds,
        })),
      );
  }

  /** Takes the next unit (its lease starts now), or none. */
  async take(): Promise<HeldJob | undefined> {
    const [job] = await this.boss.fetch<unknown>(UNIT_QUEUE, {
      batchSize: 1,
      includeMetadata: true,
    });
    return job && { id: job.id, data: job.data, retryCount: job.retryCount };
  }

  /** Completes a held job; false when it was no longer this worker's to complete (a no-op). */
  async complete(id: string, outcome: UnitOutcome): Promise<boolean> {
    const r = await this.boss.complete(UNIT_QUEUE, id, outcome);
    return (r as unknown as { affected: number }).affected === 1;
  }

  /** Fails a held job: pg-boss retries it until its attempts are spent, then it stays failed. */
  async fail(id: string, outcome: UnitOutcome): Promise<void> {
    await this.boss.fail(UNIT_QUEUE, id, outcome);
  }

  /** Jobs of a run finished after `since` (ms), oldest first. */
  async finishedSince(run: string, since: number): Promise<FinishedJob[]> {
    const { rows } = await this.sql<{
      key: string;
      path: string;
      state: "completed" | "failed";
      output: FinishedJob["output"] | null;
      at: string;
    }>(
      `SELECT singleton_key AS key, data->'unit'->>'path' AS path, state::text AS state, output,
              (extract(epoch FROM completed_on) * 1000)::bigint::text AS at
         FROM ${QUEUE_DB_SCHEMA}.job
        WHERE name = $1 AND data->>'run' = $2 AND state IN ('completed', 'failed')
          AND completed_on >= to_timestamp($3 / 1000.0)
        ORDER BY completed_on`,
      [UNIT_QUEUE, run, since],
    );
    return rows.map((r) => ({
      key: r.key,
      path: r.path,
      state: r.state,
      output: r.output ?? { worker: "?" },
      finishedAt: Number(r.at),
    }));
  }

  /** Jobs per run and state, with completions per worker: the figures of `--status`. */
  async census(run?: string): Promise<CensusRow[]> {
    const { rows } = await this.sql<{
      run: string;
      state: JobState;
      worker: string | null;
      n: string;
      first: string | null;
      last: string | null;
    }>(
      `SELECT data->>'run' AS run, state::text AS state,
              CASE WHEN state = 'completed' THEN output->>'worker' END AS worker, count(*)::text AS n,
              (extract(epoch FROM min(started_on)) * 1000)::bigint::text AS first,
              (extract(epoch FROM max(completed_on)) * 1000)::bigint::text AS last
         FROM ${QUEUE_DB_SCHEMA}.job
        WHERE name = $1 AND ($2::text IS NULL OR data->>'run' = $2)
        GROUP BY 1, 2, 3`,
      [UNIT_QUEUE, run ?? null],
    );
    return rows.map((r) => ({
      run: r.run,
      state: r.state,
      worker: r.worker,
      count: Number(r.n),
      firstStart: r.first ? Number(r.first) : undefined,
      lastFinish: r.last ? Number(r.last) : undefined,
    }));
  }

  /** The database's clock (ms): job times are the database's, not this machine's. */
  async dbNow(): Promise<number> {
    const { rows } = await this.sql<{ t: string }>(
      "SELECT (extract(epoch FROM now()) * 1000)::bigint::text AS t",
    );
    return Number(rows[0]!.t);
  }

  /** Stops pg-boss and closes its connections. */
  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, wait: true, close: true }).catch(() => undefined);
  }
}

/** One group of `census`. */
export interface CensusRow {
  run: string;
  state: JobState;
  /** The worker that completed these (completed jobs only). */
  worker: string | null;
  count: number;
  firstStart?: number;
  lastFinish?: number;
}
