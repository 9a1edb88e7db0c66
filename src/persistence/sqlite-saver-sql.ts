/** The tables and statements of keel's SQLite checkpointer (sqlite-saver.ts). */
import type Database from "better-sqlite3";
import { TASKS } from "@langchain/langgraph-checkpoint";
import type { HistoryRow } from "./delta-history.js";

/**
 * The tables, each `WITHOUT ROWID`: a row lives in its primary key's b-tree, read by key as every
 * statement reads it. A rowid table also kept every key a second time, in its primary key's index
 * (for a reading turn of the CLI, a kilobyte of the file's growth).
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS keel_checkpoints (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  parent_checkpoint_id TEXT,
  checkpoint TEXT NOT NULL,
  type TEXT NOT NULL,
  metadata BLOB,
  stored TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS keel_blobs (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  channel TEXT NOT NULL,
  version TEXT NOT NULL,
  type TEXT NOT NULL,
  blob BLOB,
  PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS keel_writes (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  channel TEXT NOT NULL,
  type TEXT NOT NULL,
  blob BLOB,
  task_path TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID;`;

/** A stored value's bytes, as text when it is JSON (no buffer made and decoded again per row). */
const data = (column = "blob", t = "") =>
  `CASE WHEN ${t}type = 'json' THEN CAST(${t}${column} AS TEXT) ELSE ${t}${column} END`;

/*
 * Reads are plain statements of a few joins each, compiled by every process that resumes, and the
 * history looks for stored values only when the asked channels have some (`SEEDED`). A 10-turn
 * resume (graph.getState on a fresh saver) took 1.11 ms as one statement for the checkpoint (a CTE
 * read three times in a UNION) and one for the history that joined every ancestor with the stored
 * values; it takes 0.96 ms so.
 */

/** The checkpoint a config names (or the thread's newest): its row as `CheckpointRow`. */
export const CHECKPOINT = (byId: boolean) => `
SELECT checkpoint_id, parent_checkpoint_id, checkpoint, type, ${data("metadata")}
  FROM keel_checkpoints WHERE thread_id = @thread AND checkpoint_ns = @ns
  ${byId ? "AND checkpoint_id = @id" : "ORDER BY checkpoint_id DESC LIMIT 1"}`;

/** A checkpoint row: id, parent id, skeleton (JSON), metadata's type and bytes. */
export type CheckpointRow = [string, string | null, string, string, Buffer | string];

/**
 * The values a checkpoint's versions name (`@checkpoint` is its skeleton), each found by key.
 * `CROSS JOIN` fixes the join order: left to SQLite's planner, a join like this scanned
 * `keel_blobs` whole, a resume that grew with the thread (4.1 ms at 300 turns; 0.09 ms by key).
 */
export const VALUES = `
SELECT bl.channel, bl.type, ${data("blob", "bl.")}
  FROM json_each(@checkpoint, '$.channel_versions') AS v CROSS JOIN keel_blobs bl
    ON bl.thread_id = @thread AND bl.checkpoint_ns = @ns AND bl.channel = v.key
   AND bl.version = CAST(v.value AS TEXT)`;

/** A stored value: channel, type, bytes. */
export type ValueRow = [string, string, Buffer | string];

/** A checkpoint's pending writes. */
export const WRITES = `
SELECT task_id, channel, task_path, idx, type, ${data()}
  FROM keel_writes WHERE thread_id = @thread AND checkpoint_ns = @ns AND checkpoint_id = @id`;

/** A pending write: task, channel, task path, index, type, bytes. */
export type WriteRow = [string, string, string, number, string, Buffer | string];

/** A checkpoint's ancestors, depth 1 its parent, to the start (the `WITH` clause of `ALONG`). */
const CHAIN = `
WITH RECURSIVE chain(id, depth) AS (
  SELECT parent_checkpoint_id, 1 FROM keel_checkpoints
   WHERE thread_id = @thread AND checkpoint_ns = @ns AND checkpoint_id = @id
  UNION ALL
  SELECT c.parent_checkpoint_id, chain.depth + 1 FROM chain CROSS JOIN keel_checkpoints c
    ON c.thread_id = @thread AND c.checkpoint_ns = @ns AND c.checkpoint_id = chain.id
)`;

/**
 * Whether the thread stores a value of any asked channel. A delta channel stores one only at a
 * snapshot (LangGraph's bound on replay, thousands of steps in), so this is almost always none,
 * and then no ancestor holds a seed: the history is the writes along the ancestors (`ALONG`).
 */
export const SEEDED = `
SELECT 1 FROM json_each(@channels) AS want CROSS JOIN keel_blobs bl
  ON bl.thread_id = @thread AND bl.checkpoint_ns = @ns AND bl.channel = want.value LIMIT 1`;

/** The writes of a checkpoint's ancestors to the asked channels, as `HISTORY`'s kind 2 rows. */
export const ALONG = `${CHAIN}
SELECT 2 AS kind, chain.depth AS depth, w.channel AS channel, w.task_id AS task,
       w.task_path AS path, w.idx AS idx, w.type AS type, ${data("blob", "w.")} AS data
  FROM chain CROSS JOIN keel_writes w
    ON w.thread_id = @thread AND w.checkpoint_ns = @ns AND w.checkpoint_id = chain.id
  WHERE w.channel IN (SELECT value FROM json_each(@channels))`;

/**
 * A checkpoint's ancestors (depth 1 = its parent) back to the nearest one that stored a value of
 * every asked channel (a delta channel's snapshot), each with the values of the asked channels its
 * own `put` stored (kind 1) and its writes to them (kind 2). The nearest ancestor that stored a
 * channel's value is the seed LangGraph's walk would stop at; the walk stops once each asked
 * channel has one (`here`: a bit per channel the ancestor stored, `nearer`: those nearer ones did), so a resume reads what was written since the
 * snapshots, not the thread's whole history. A channel with no snapshot yet walks to the start.
 */
const BITS = `(SELECT coalesce(sum(1 << n), 0) FROM want
   WHERE json_type(c.stored, '$."' || want.channel || '"') IS NOT NULL)`;
export const HISTORY = `
WITH RECURSIVE want(n, channel) AS MATERIALIZED (SELECT key, value FROM json_each(@channels)),
chain(id, parent, depth, stored, here, nearer) AS (
  SELECT c.checkpoint_id, c.parent_checkpoint_id, 1, c.stored, ${BITS}, 0
    FROM keel_checkpoints head CROSS JOIN keel_checkpoints c
      ON c.thread_id = @thread AND c.checkpoint_ns = @ns AND c.checkpoint_id = head.parent_checkpoint_id
   WHERE head.thread_id = @thread AND head.checkpoint_ns = @ns AND head.checkpoint_id = @id
  UNION ALL
  SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1, c.stored, ${BITS},
         chain.nearer | chain.here
    FROM chain CROSS JOIN keel_checkpoints c
      ON c.thread_id = @thread AND c.checkpoint_ns = @ns AND c.checkpoint_id = chain.parent
   WHERE chain.nearer | chain.here != (1 << (SELECT count(*) FROM want)) - 1
)
SELECT 1 AS kind, chain.depth AS depth, want.channel AS channel, NULL AS task, NULL AS path,
       NULL AS idx, bl.type AS type, ${data("blob", "bl.")} AS data
  FROM chain CROSS JOIN want CROSS JOIN keel_blobs bl
    ON bl.thread_id = @thread AND bl.checkpoint_ns = @ns AND bl.channel = want.channel
   AND bl.version = json_extract(chain.stored, '$."' || want.channel || '"')
  WHERE chain.here & (1 << want.n)
UNION ALL
SELECT 2, chain.depth, w.channel, w.task_id, w.task_path, w.idx, w.type, ${data("blob", "w.")}
  FROM chain CROSS JOIN keel_writes w
    ON w.thread_id = @thread AND w.checkpoint_ns = @ns AND w.checkpoint_id = chain.id
  WHERE w.channel IN (SELECT channel FROM want)`;

/** A `HISTORY` row as `raw()` reads it: `HistoryRow`'s fields in order. */
type HistoryTuple = [
  HistoryRow["kind"],
  number,
  string,
  string | null,
  string | null,
  number | null,
  string,
  HistoryRow["data"],
];

type Lazy<P extends unknown[] | object, R = unknown> = () => Database.Statement<P, R>;
type Params = Record<string, string>;
/** A read compiled when first called, its rows as arrays: rows made objects by the driver cost a third more. */
type Rows<R> = () => (params: Params) => R[];

/** The saver's statements, each compiled when first called. */
export interface Statements {
  checkpoint: (byId: boolean) => (params: Params) => CheckpointRow | undefined;
  values: Rows<ValueRow>;
  writes: Rows<WriteRow>;
  /** The history's rows: `ALONG`'s when no asked channel has a stored value (`SEEDED`), else `HISTORY`'s. */
  history: (params: Params) => HistoryRow[];
  putCheckpoint: Lazy<unknown[]>;
  putBlob: Lazy<unknown[]>;
  insertWrite: Lazy<unknown[]>;
  replaceWrite: Lazy<unknown[]>;
  sends: Lazy<[string, string, string], { type: string; blob: Buffer }>;
}

/** Each statement compiled when first used: opening a thread to read it compiles only the reads. */
export function statements(db: Database.Database): Statements {
  const lazy = <T>(make: () => T) => {
    let made: T | undefined;
    return () => (made ??= make());
  };
  const rows = <R>(sql: string) =>
    lazy(() => {
      const st = db.prepare<Params, R>(sql).raw(true);
      return (params: Params) => st.all(params);
    });
  const write = (table: string, conflict: string, columns: string) =>
    `INSERT ${conflict} INTO ${table} (${columns}) VALUES (${columns.replace(/[^,]+/g, "?")})`;
  const writeColumns =
    "thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path";
  const byId = rows<CheckpointRow>(CHECKPOINT(true));
  const latest = rows<CheckpointRow>(CHECKPOINT(false));
  const seeded = lazy(() => db.prepare<Params, number>(SEEDED).pluck());
  const along = rows<HistoryTuple>(ALONG);
  const full = rows<HistoryTuple>(HISTORY);
  return {
    checkpoint: (id) => (params) => (id ? byId : latest)()(params)[0],
    values: rows<ValueRow>(VALUES),
    writes: rows<WriteRow>(WRITES),
    history: (params) =>
      (seeded().get(params) === undefined ? along : full)()(params).map(
        ([kind, depth, channel, task, path, idx, type, data]) => ({
          kind,
          depth,
          channel,
          task,
          path,
          idx,
          type,
          data,
        }),
      ),
    putCheckpoint: lazy(() =>
      db.prepare(
        write(
          "keel_checkpoints",
          "OR REPLACE",
          "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, type, metadata, stored",
        ),
      ),
    ),
    putBlob: lazy(() =>
      db.prepare(
        write("keel_blobs", "OR IGNORE", "thread_id, checkpoint_ns, channel, version, type, blob"),
      ),
    ),
    insertWrite: lazy(() => db.prepare(write("keel_writes", "OR IGNORE", writeColumns))),
    replaceWrite: lazy(() => db.prepare(write("keel_writes", "OR REPLACE", writeColumns))),
    sends: lazy(() =>
      db.prepare<[string, string, string], { type: string; blob: Buffer }>(
        `SELECT type, blob FROM keel_writes WHERE thread_id = ? AND checkpoint_ns = ?
         AND checkpoint_id = ? AND channel = '${TASKS}' ORDER BY task_path, task_id, idx`,
      ),
    ),
  };
}
