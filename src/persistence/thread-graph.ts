/**
 * Which of keel's graphs a thread belongs to, by the channels its newest checkpoint has written:
 * the coder's and the analyst's threads live in the same checkpoint store, and a thread given to
 * the other graph's command would be read as an empty run of it (`keel run --thread` reported an
 * analysis as "finished (running)"; `keel analyze --thread` would write its fields into a coding
 * thread's).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver } from "@langchain/langgraph";

export type ThreadGraph = "coder" | "analyst";

/** A channel only the coder writes, and one only the analyst writes. */
const MARKS: Record<ThreadGraph, string> = { coder: "messages", analyst: "cursor" };

/** The graph whose channels a checkpoint's versions name (none: a thread of neither, or new). */
export function graphOfChannels(versions: Record<string, unknown>): ThreadGraph | undefined {
  return (Object.keys(MARKS) as ThreadGraph[]).find((g) => MARKS[g] in versions);
}

/** The graph a stored thread belongs to (none when it does not exist). */
export async function threadGraph(
  saver: BaseCheckpointSaver,
  config: RunnableConfig,
): Promise<ThreadGraph | undefined> {
  const tuple = await saver.getTuple(config);
  return tuple && graphOfChannels(tuple.checkpoint.channel_versions);
}
