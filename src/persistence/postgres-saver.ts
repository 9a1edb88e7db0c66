/**
 * LangGraph's Postgres saver, with the ancestor walk that rebuilds delta channels in one recursive
 * query (delta-history.ts) that stops at the channels' snapshots, instead of one `getTuple` per
 * ancestor. Values are read back with keel's serializer (serde.ts).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { assembleHistory, type DeltaHistories, type HistoryRow } from "./delta-history.js";
import { KeelSerializer } from "./serde.js";

/**
 * A checkpoint's ancestors back to the nearest one holding a stored value of every asked channel
 * (a delta channel's snapshot: a blob at the version it names, not LangGraph's "empty" one for a
 * channel without a value), with those values (kind 1) and the
 * ancestors' writes to the asked channels (kind 2); as the SQLite saver's `HISTORY`
 * (sqlite-saver-sql.ts), a bit per channel in `here` (this ancestor holds one) and `nearer`.
 */
const HISTORY = (schema: string) => {
  const t = (name: string) => `"${schema}".${name}`;
  const bits = `(SELECT coalesce(bit_or(1 << (u.i::int - 1)), 0) FROM unnest($4::text[]) WITH ORDINALITY u(ch, i)
     WHERE EXISTS (SELECT 1 FROM ${t("checkpoint_blobs")} bl WHERE bl.thread_id = $1
       AND bl.checkpoint_ns = $2 AND bl.channel = u.ch AND bl.type <> 'empty'
       AND bl.version = c.checkpoint -> 'channel_versions' ->> u.ch))`;
  return `
WITH RECURSIVE chain(id, parent, depth, versions, here, nearer) AS (
  SELECT c.checkpoint_id, c.parent_checkpoint_id, 1, c.checkpoint -> 'channel_versions', ${bits}, 0
    FROM ${t("checkpoints")} head JOIN ${t("checkpoints")} c
      ON c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = head.parent_checkpoint_id
   WHERE head.thread_id = $1 AND head.checkpoint_ns = $2 AND head.checkpoint_id = $3
  UNION ALL
  SELECT c.checkpoint_id, c.parent_checkpoint_id, chain.depth + 1, c.checkpoint -> 'channel_versions',
         ${bits}, chain.nearer | chain.here
    FROM chain JOIN ${t("checkpoints")} c
      ON c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = chain.parent
   WHERE (chain.nearer | chain.here) <> (1 << cardinality($4::text[])) - 1
)
SELECT 1 AS kind, chain.depth, bl.channel, NULL::text AS task, NULL::text AS path,
       NULL::int AS idx, bl.type, bl.blob AS data
  FROM chain JOIN ${t("checkpoint_blobs")} bl ON bl.thread_id = $1 AND bl.checkpoint_ns = $2
   AND bl.channel = ANY($4::text[]) AND bl.version = chain.versions ->> bl.channel
 WHERE chain.here <> 0
UNION ALL
SELECT 2, chain.depth, w.channel, w.task_id, NULL, w.idx, w.type, w.blob
  FROM chain JOIN ${t("checkpoint_writes")} w
    ON w.thread_id = $1 AND w.checkpoint_ns = $2 AND w.checkpoint_id = chain.id
   AND w.channel = ANY($4::text[])`;
};

export class KeelPostgresSaver extends PostgresSaver {
  private readonly db: pg.Pool;
  private readonly schema: string;

  constructor(url: string, options: { schema?: string } = {}) {
    const pool = new pg.Pool({ connectionString: url });
    super(pool, new KeelSerializer(), options);
    this.db = pool;
    this.schema = options.schema ?? "public";
  }

  /** One query for every ancestor's stored values and writes of the asked channels. */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<DeltaHistories> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const c = (config.configurable ?? {}) as {
      thread_id?: string;
      checkpoint_ns?: string;
      checkpoint_id?: string;
    };
    const id =
      c.checkpoint_id ??
      ((await this.getTuple(config))?.config.configurable?.checkpoint_id as string | undefined);
    if (id === undefined) return assembleHistory([], channels, this.serde);
    const { rows } = await this.db.query<HistoryRow>(HISTORY(this.schema), [
      c.thread_id,
      c.checkpoint_ns ?? "",
      id,
      channels,
    ]);
    return assembleHistory(rows, channels, this.serde);
  }
}
