/**
 * A thread's whole conversation, the messages moved out of state (archive.ts) included: every write
 * to `messages` along the checkpoint's ancestors, oldest first, applied as the channel applies them
 * but for the moves. What `graph.getState` shows is its newest part; this reads one checkpoint per
 * step of the thread, for a person or a test that wants all of it, not for a turn.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { appendMessages, isMovedOut } from "../channels.js";

export async function wholeConversation(
  saver: BaseCheckpointSaver,
  config: RunnableConfig,
): Promise<BaseMessage[]> {
  const head = await saver.getTuple(config);
  const ancestors: CheckpointTuple[] = [];
  for (let t = head; t?.parentConfig;) {
    t = await saver.getTuple(t.parentConfig);
    if (t) ancestors.push(t);
  }
  const writes = ancestors
    .reverse()
    .flatMap((t) => t.pendingWrites ?? [])
    .filter(([, channel]) => channel === "messages")
    .map(([, , value]) => ([value] as unknown[]).flat().filter((v) => !isMovedOut(v)));
  return appendMessages([], writes);
}
