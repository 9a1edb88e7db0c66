/**
 * keel's statements on pg-boss 10's job table (schema version 24, which keel checks before use):
 * taking a job stamps it with its holder, the worker's session and its advisory lock; completing
 * or failing needs that stamp; whoever maintains the queue fails the active jobs of a holder
 * whose session is gone into retry (`SWEEP`). Plus keel's own table of workers and the index its
 * polls use. Every statement on running jobs names the queue's policy (`stately`), so that
 * pg-boss's partial index of queued and running jobs serves it: a million finished jobs beside
 * them are never scanned. Pure: SQL text only.
 */

/** keel's own schema, apart from any pg-boss the database's other users run. */
export const QUEUE_DB_SCHEMA = "keel_queue";
const S = QUEUE_DB_SCHEMA;

/** The advisory locks a worker's session holds for its own id ("kee" and 2; the second key is the worker's). */
export const WORKER_LOCKS = 0x6b656502;
/** The advisory lock under which keel's table and index are created ("kee" and 3). */
export const SETUP_LOCK = 0x6b656503;

/** keel's table of workers and the index of jobs by analysis (created once, under `SETUP_LOCK`). */
export const SETUP = `
DO $$ BEGIN
  PERFORM pg_advisory_xact_lock(${SETUP_LOCK});
  CREATE TABLE IF NOT EXISTS ${S}.keel_worker (
    id text PRIMARY KEY,
    name text NOT NULL,
    host text NOT NULL,
    pid int NOT NULL,
    servers text[] NOT NULL,
    lock bigint NOT NULL,
    lock_pid int NOT NULL,
    started_on timestamptz NOT NULL DEFAULT now(),
    last_seen timestamptz NOT NULL DEFAULT now(),
    units int NOT NULL DEFAULT 0,
    failures int NOT NULL DEFAULT 0,
    stopped_on timestamptz
  );
  CREATE INDEX IF NOT EXISTS job_keel_analysis ON ${S}.job ((data->>'analysis'), completed_on);
END $$`;

/** Whether the session `pid` still holds the worker lock `lock` in this database ($lock, $pid: SQL). */
const holds = (lock: string, pid: string) => `EXISTS (
  SELECT 1 FROM pg_locks l
   WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.classid = ${WORKER_LOCKS}::bigint::oid AND l.objid = (${lock})::bigint::oid
     AND l.pid = (${pid})::int)`;

/**
 * Takes the next job (largest first, then oldest) whose key has no job running, and stamps it:
 * $1 queue, $2 holder id, $3 lock key, $4 lock session's pid, $5 worker name.
 */
export const TAKE = `
WITH next AS (
  SELECT j.id FROM ${S}.job j
   WHERE j.name = $1 AND j.state < 'active' AND j.start_after < now()
     AND NOT EXISTS (SELECT 1 FROM ${S}.job a  -- pg-boss's index of stately keys: no scan
                      WHERE a.name = $1 AND a.state = 'active' AND a.policy = 'stately'
                        AND a.singleton_key = j.singleton_key)
   ORDER BY j.priority DESC, j.created_on, j.id
   LIMIT 1
   FOR UPDATE SKIP LOCKED
), taken AS (
  UPDATE ${S}.job j SET
    state = 'active',
    started_on = now(),
    retry_count = CASE WHEN j.started_on IS NOT NULL THEN j.retry_count + 1 ELSE j.retry_count END,
    output = jsonb_build_object('holder', $2::text, 'lock', $3::bigint, 'pid', $4::int,
                                'worker', $5::text, 'lease', extract(epoch FROM j.expire_in)::int)
  FROM next WHERE j.name = $1 AND j.id = next.id
  RETURNING j.id, j.data, j.retry_count, extract(epoch FROM j.expire_in)::int AS lease
)
SELECT id, data, retry_count, lease FROM taken`;

/**
 * Sets `set` on the job $2 of queue $1 if holder $4 holds it, and counts it in the holder's
 * `counter`; the statement answers how many jobs it changed (0: no longer the holder's).
 */
const onHeld = (set: string, counter: "units" | "failures") => `
WITH changed AS (
  UPDATE ${S}.job SET ${set}
   WHERE name = $1 AND id = $2 AND state = 'active' AND output->>'holder' = $4
  RETURNING 1
), seen AS (
  UPDATE ${S}.keel_worker SET ${counter} = ${counter} + (SELECT count(*) FROM changed), last_seen = now()
   WHERE id = $4
)
SELECT count(*)::int AS n FROM changed`;

/**
 * Completes a job this holder holds, and drops its text (the finding is in the store; a million
 * finished jobs would otherwise keep every file's text): $1 queue, $2 job id, $3 output, $4 holder id.
 */
export const COMPLETE = onHeld(
  "completed_on = now(), state = 'completed', output = $3::jsonb, data = data - 'text'",
  "units",
);

/**
 * The new state of a failed job: retried while it has attempts left, unless `final` ($final); a
 * job failed for good keeps no text.
 */
const failSet = (final: string, output: string) => {
  const retry = `NOT ${final} AND retry_count < retry_limit`;
  return `
    state = CASE WHEN ${retry} THEN 'retry'::${S}.job_state ELSE 'failed'::${S}.job_state END,
    start_after = CASE WHEN ${retry} THEN now() + retry_delay * interval '1 second' ELSE start_after END,
    completed_on = CASE WHEN ${retry} THEN NULL ELSE now() END,
    data = CASE WHEN ${retry} THEN data ELSE data - 'text' END,
    output = ${output}`;
};

/** Fails a job this holder holds: $1 queue, $2 job id, $3 output, $4 holder id, $5 final (no retry). */
export const FAIL = onHeld(failSet("$5::bool", "$3::jsonb"), "failures");

/**
 * A live holder's lease starts again (the lease is the last resort for a holder whose session
 * lives but who does not renew), and its jobs carry its current session: $1 queue, $2 holder id,
 * $3 lock key, $4 lock session's pid.
 */
export const RENEW = `
WITH renewed AS (
  UPDATE ${S}.job SET
    expire_in = (now() - started_on) + make_interval(secs => (output->>'lease')::int),
    output = output || jsonb_build_object('lock', $3::bigint, 'pid', $4::int)
   WHERE name = $1 AND state = 'active' AND policy = 'stately' AND output->>'holder' = $2
  RETURNING 1
), seen AS (
  UPDATE ${S}.keel_worker SET last_seen = now(), lock = $3, lock_pid = $4 WHERE id = $2
)
SELECT count(*)::int AS n FROM renewed`;

/** Fails into retry every active job whose holder's session no longer holds its lock: $1 queue. */
export const SWEEP = `
WITH dead AS (
  SELECT j.id FROM ${S}.job j
   WHERE j.name = $1 AND j.state = 'active' AND j.policy = 'stately' AND j.output ? 'holder'
     AND NOT ${holds("j.output->>'lock'", "j.output->>'pid'")}
   FOR UPDATE OF j SKIP LOCKED
)
UPDATE ${S}.job j SET ${failSet(
  "false",
  `jsonb_build_object('worker', j.output->>'worker', 'error',
      'the worker ' || (j.output->>'worker') || ' stopped while it held the unit (its database session ended)')`,
)}
  FROM dead WHERE j.name = $1 AND j.id = dead.id AND j.state = 'active'
RETURNING j.id, j.output->>'worker' AS worker`;

/** Every job of an analysis, for a coordinator that starts or resumes: $1 queue, $2 analysis. */
export const JOBS_OF = `
SELECT singleton_key AS key, state::text AS state, output
  FROM ${S}.job WHERE name = $1 AND data->>'analysis' = $2`;

/** An analysis's jobs finished since $3 (ms): $1 queue, $2 analysis. */
export const FINISHED_SINCE = `
SELECT singleton_key AS key, state::text AS state, output,
       (extract(epoch FROM completed_on) * 1000)::bigint::text AS at
  FROM ${S}.job
 WHERE name = $1 AND data->>'analysis' = $2 AND completed_on >= to_timestamp($3 / 1000.0)
   AND state IN ('completed', 'failed')
 ORDER BY completed_on`;

/** An analysis's unfinished jobs per state: $1 queue, $2 analysis. */
export const OPEN_OF = `
SELECT state::text AS state, count(*)::int AS n FROM ${S}.job
 WHERE name = $1 AND data->>'analysis' = $2 AND completed_on IS NULL
 GROUP BY 1`;

/** Jobs per run and analysis and state, with completions per worker: $1 queue, $2 run or null. */
export const CENSUS = `
SELECT data->>'run' AS run, data->>'analysis' AS analysis, state::text AS state,
       CASE WHEN state = 'completed' THEN output->>'worker' END AS worker, count(*)::int AS n,
       (extract(epoch FROM min(started_on)) * 1000)::bigint::text AS first,
       (extract(epoch FROM max(coalesce(completed_on, started_on, created_on))) * 1000)::bigint::text AS last
  FROM ${S}.job
 WHERE name = $1 AND ($2::text IS NULL OR data->>'run' = $2)
 GROUP BY 1, 2, 3, 4`;

/** Registers a worker: $1 id, $2 name, $3 host, $4 pid, $5 servers, $6 lock key, $7 lock pid. */
export const REGISTER = `
WITH old AS (DELETE FROM ${S}.keel_worker WHERE last_seen < now() - interval '7 days')
INSERT INTO ${S}.keel_worker (id, name, host, pid, servers, lock, lock_pid)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (id) DO UPDATE SET lock = $6, lock_pid = $7, last_seen = now()`;

/** A worker stopped on its own: $1 id. */
export const STOPPED = `UPDATE ${S}.keel_worker SET stopped_on = now(), last_seen = now() WHERE id = $1`;

/** The workers seen in the last day, with whether their session still holds their lock. */
export const WORKERS = `
SELECT id, name, host, pid, servers, units, failures, stopped_on IS NOT NULL AS stopped,
       ${holds("w.lock", "w.lock_pid")} AS alive,
       (extract(epoch FROM last_seen) * 1000)::bigint::text AS last_seen,
       (extract(epoch FROM started_on) * 1000)::bigint::text AS started_on
  FROM ${S}.keel_worker w
 WHERE last_seen > now() - interval '1 day'
 ORDER BY name, started_on`;
