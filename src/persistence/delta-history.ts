/**
 * LangGraph's delta-channel history (`BaseCheckpointSaver.getDeltaChannelHistory`) from the rows
 * of one query over a checkpoint's ancestors, pure: keel's SQLite and Postgres savers each fetch
 * the rows in one recursive query (LangGraph's default walk reads one checkpoint per query).
 */
import {
  compareWritesSortKeys,
  writesSortKey,
  type BaseCheckpointSaver,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";

export type DeltaHistories = Awaited<ReturnType<BaseCheckpointSaver["getDeltaChannelHistory"]>>;

/** A stored value of an asked channel at an ancestor's version (kind 1), or a write to one (kind 2). */
export interface HistoryRow {
  kind: 1 | 2;
  /** 1: the checkpoint's parent, 2: its grandparent… */
  depth: number;
  channel: string;
  task: string | null;
  path: string | null;
  idx: number | null;
  type: string;
  data: Uint8Array | string | null;
}

/**
 * Per channel: the value at the nearest ancestor that stores one (the seed, absent when none
 * does), and the writes of that ancestor and every nearer one, oldest first and, within one
 * ancestor, in the order live execution applied them.
 */
export async function assembleHistory(
  rows: readonly HistoryRow[],
  channels: readonly string[],
  serde: SerializerProtocol,
): Promise<DeltaHistories> {
  const seedDepth = new Map<string, number>();
  for (const r of rows)
    if (r.kind === 1 && r.type !== "empty" && r.depth < (seedDepth.get(r.channel) ?? Infinity))
      seedDepth.set(r.channel, r.depth);
  const result: DeltaHistories = {};
  for (const ch of channels) result[ch] = { writes: [] };
  const key = (r: HistoryRow) => writesSortKey(r.path ?? "", r.task ?? "", r.idx ?? 0);
  const kept = rows
    .filter((r) => r.kind === 2 && r.depth <= (seedDepth.get(r.channel) ?? Infinity))
    .sort((x, y) => y.depth - x.depth || compareWritesSortKeys(key(x), key(y)));
  for (const r of kept)
    result[r.channel]!.writes.push([r.task!, r.channel, await serde.loadsTyped(r.type, r.data!)]);
  for (const r of rows)
    if (r.kind === 1 && r.type !== "empty" && seedDepth.get(r.channel) === r.depth)
      result[r.channel]!.seed = await serde.loadsTyped(r.type, r.data!);
  return result;
}
