/**
 * The unit queue on pg-boss, in its own schema (`keel_queue`) of the Postgres keel already uses:
 * pg-boss creates the tables, inserts jobs (singleton keys, policy `stately`: one queued and one
 * running job per key) and runs the lease maintenance; keel takes, completes and fails jobs with
 * its own statements (queue-sql.ts), which stamp each job with its holder's session so that a
 * dead worker's units go back to the queue within seconds (worker-session.ts). Opening checks the
 * database first: unreachable, or a queue schema of another version, is a clear error.
 */
import PgBoss from "pg-boss";
import pg from "pg";
import { withoutCredentials } from "../persistence/checkpointer.js";
import { CHECK_SERVER, PersistenceError } from "../persistence/open.js";
import { QUEUE_SCHEMA, UNIT_ATTEMPTS, UNIT_QUEUE, type UnitJob, type UnitOutcome } from "./jobs.js";
import * as SQL from "./queue-sql.js";

export { QUEUE_DB_SCHEMA } from "./queue-sql.js";
const { QUEUE_DB_SCHEMA } = SQL;

/** A job's priority from its unit's size: one step per doubling from 1 KB (the highest is taken first). */
export const sizePriority = (bytes: number) =>
  Math.max(0, Math.ceil(Math.log2(Math.max(1, bytes) / 1024)));

/** The queue in the database is of another version than this keel's. */
export class QueueSchemaError extends PersistenceError {
  override name = "QueueSchemaError";
}

export interface QueueOptions {
  /** Run pg-boss's maintenance here (lease expiry); every process may, pg-boss runs one at a time. */
  maintenanceSeconds?: number;
}

/** Who holds a job: a worker's id and the session (advisory lock, backend pid) that proves it alive. */
export interface Holder {
  id: string;
  name: string;
  lock: number;
  pid: number;
}

/** A unit job as a worker holds it. */
export interface HeldJob {
  id: string;
  data: unknown;
  retryCount: number;
  /** The job's lease, seconds: the holder renews it while it works. */
  leaseSeconds: number;
}

/** A finished (completed or failed) job, as the coordinator reads it. */
export interface FinishedJob {
  key: string;
  state: "completed" | "failed";
  output: UnitOutcome & { value?: { message?: string } };
  finishedAt: number;
}

export type JobState = "created" | "retry" | "active" | "completed" | "cancelled" | "failed";

/** A job of an analysis as a starting coordinator finds it. */
export interface AnalysisJob {
  key: string;
  state: JobState;
  output: (UnitOutcome & { value?: { message?: string } }) | null;
}

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
    await boss.getDb().executeSql(SQL.SETUP, []);
  } catch (err) {
    await boss.stop({ graceful: false, wait: false }).catch(() => undefined);
    throw err;
  }
  return new UnitQueue(boss, errors);
}

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === "23505";

export class UnitQueue {
  constructor(
    private readonly boss: PgBoss,
    /** Errors pg-boss reported in the background (e.g. a lost connection during maintenance). */
    readonly errors: Error[],
  ) {}

  /** Runs one of keel's statements on the queue's pool. */
  sql<R>(text: string, values: unknown[] = []): Promise<{ rows: R[] }> {
    return this.boss.getDb().executeSql(text, values);
  }

  /**
   * Sends one job per unit; a unit whose key is already queued is not sent twice. `leaseSeconds`:
   * how long a job may stay with a holder that neither finishes nor renews it (the last resort:
   * a dead worker's job returns as soon as its session ends). Larger units are taken first.
   */
  async enqueue(jobs: Array<{ data: UnitJob; key: string }>, leaseSeconds: number): Promise<void> {
    for (let i = 0; i < jobs.length; i += 200)
      await this.boss.insert(
        jobs.slice(i, i + 200).map(({ data, key }) => ({
          name: UNIT_QUEUE,
          data,
          singletonKey: key,
          priority: sizePriority(data.unit.bytes),
          retryLimit: UNIT_ATTEMPTS - 1,
          retryDelay: 1,
          expireInSeconds: leaseSeconds,
        })),
      );
  }

  /** Takes the next unit for `h`, stamped with its session, or none. */
  async take(h: Holder): Promise<HeldJob | undefined> {
    try {
      const { rows } = await this.sql<{
        id: string;
        data: unknown;
        retry_count: number;
        lease: number;
      }>(SQL.TAKE, [UNIT_QUEUE, h.id, h.lock, h.pid, h.name]);
      const r = rows[0];
      return r && { id: r.id, data: r.data, retryCount: r.retry_count, leaseSeconds: r.lease };
    } catch (err) {
      if (isUniqueViolation(err)) return undefined; // another took the key's other job first
      throw err;
    }
  }

  /** Completes a held job; false when it was no longer `h`'s (a no-op). */
  async complete(id: string, h: Holder, outcome: UnitOutcome): Promise<boolean> {
    const { rows } = await this.sql<{ n: number }>(SQL.COMPLETE, [UNIT_QUEUE, id, outcome, h.id]);
    return rows[0]?.n === 1;
  }

  /** Fails a held job: retried until its attempts are spent (unless `final`), then it stays failed. */
  async fail(id: string, h: Holder, outcome: UnitOutcome, final = false): Promise<boolean> {
    const { rows } = await this.sql<{ n: number }>(SQL.FAIL, [
      UNIT_QUEUE,
      id,
      outcome,
      h.id,
      final,
    ]);
    return rows[0]?.n === 1;
  }

  /** Renews the leases of `h`'s jobs (and says it is alive); how many it holds. */
  async renew(h: Holder): Promise<number> {
    const { rows } = await this.sql<{ n: number }>(SQL.RENEW, [UNIT_QUEUE, h.id, h.lock, h.pid]);
    return rows[0]?.n ?? 0;
  }

  /** Fails into retry the jobs of holders whose session ended; the jobs and their workers. */
  async sweep(): Promise<Array<{ id: string; worker: string }>> {
    return (await this.sql<{ id: string; worker: string }>(SQL.SWEEP, [UNIT_QUEUE])).rows;
  }

  /** Every job of an analysis. */
  async jobsOf(analysis: string): Promise<AnalysisJob[]> {
    return (await this.sql<AnalysisJob>(SQL.JOBS_OF, [UNIT_QUEUE, analysis])).rows;
  }

  /** Jobs of an analysis finished after `since` (ms), oldest first. */
  async finishedSince(analysis: string, since: number): Promise<FinishedJob[]> {
    const { rows } = await this.sql<{
      key: string;
      state: "completed" | "failed";
      output: FinishedJob["output"] | null;
      at: string;
    }>(SQL.FINISHED_SINCE, [UNIT_QUEUE, analysis, since]);
    return rows.map((r) => ({
      key: r.key,
      state: r.state,
      output: r.output ?? { worker: "?" },
      finishedAt: Number(r.at),
    }));
  }

  /** An analysis's unfinished jobs per state (queued, retry, active). */
  async openOf(analysis: string): Promise<Partial<Record<JobState, number>>> {
    const { rows } = await this.sql<{ state: JobState; n: number }>(SQL.OPEN_OF, [
      UNIT_QUEUE,
      analysis,
    ]);
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  /** Jobs per run, analysis and state, with completions per worker: the figures of `--status`. */
  async census(run?: string): Promise<CensusRow[]> {
    const { rows } = await this.sql<{
      run: string;
      analysis: string;
      state: JobState;
      worker: string | null;
      n: number;
      first: string | null;
      last: string | null;
    }>(SQL.CENSUS, [UNIT_QUEUE, run ?? null]);
    return rows.map((r) => ({
      run: r.run,
      analysis: r.analysis,
      state: r.state,
      worker: r.worker,
      count: r.n,
      firstStart: r.first ? Number(r.first) : undefined,
      lastActivity: r.last ? Number(r.last) : undefined,
    }));
  }

  /** The workers seen in the last day: alive (their session holds its lock), stopped, or gone. */
  async workers(): Promise<WorkerRow[]> {
    const { rows } = await this.sql<
      Omit<WorkerRow, "state" | "lastSeen" | "startedOn"> & {
        stopped: boolean;
        alive: boolean;
        last_seen: string;
        started_on: string;
      }
    >(SQL.WORKERS);
    return rows.map(({ stopped, alive, last_seen, started_on, ...r }) => ({
      ...r,
      state: alive ? "alive" : stopped ? "stopped" : "gone",
      lastSeen: Number(last_seen),
      startedOn: Number(started_on),
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
  analysis: string;
  state: JobState;
  /** The worker that completed these (completed jobs only). */
  worker: string | null;
  count: number;
  firstStart?: number;
  lastActivity?: number;
}

/** A worker's health, as `--status` and the progress line show it. */
export interface WorkerRow {
  id: string;
  name: string;
  host: string;
  pid: number;
  servers: string[];
  units: number;
  failures: number;
  /** alive: its session holds its lock; stopped: it left cleanly; gone: its session ended. */
  state: "alive" | "stopped" | "gone";
  lastSeen: number;
  startedOn: number;
}
