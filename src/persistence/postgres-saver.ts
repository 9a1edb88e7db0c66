/**
 * LangGraph's Postgres saver, with the ancestor walk that rebuilds delta channels in one recursive
 * query (delta-history.ts) instead of one `getTuple` per ancestor: keel's delta channels take no
 * snapshots of their own (agent/channels.ts), so a resumed thread's walk reaches far back. Values
 * are read back with keel's serializer (serde.ts).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { assembleHistory, type DeltaHistories, type HistoryRow } from "./delta-history.js";
import { KeelSerializer } from "./serde.js";

const HISTORY = (schema: string) => {
  const t = (name: string) => `"${schema}".${name}`;
  return `
WITH RECURSIVE chain(id, depth) AS (
  SELECT parent_checkpoint_id, 1 FROM ${t("checkpoints")}
   WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3
  UNION ALL
  SELECT c.parent_checkpoint_id, chain.depth + 1 FROM chain JOIN ${t("checkpoints")} c
    ON c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = chain.id
)
SELECT 1 AS kind, chain.depth, bl.channel, NULL::text AS task, NULL::text AS path,
       NULL::int AS idx, bl.type, bl.blob AS data
  FROM chain JOIN ${t("checkpoints")} c
    ON c.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = chain.id
  JOIN ${t("checkpoint_blobs")} bl ON bl.thread_id = $1 AND bl.checkpoint_ns = $2
   AND bl.channel = ANY($4::text[]) AND bl.version = c.checkpoint -> 'channel_versions' ->> bl.channel
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
