/**
 * The coder state's growing collections as LangGraph delta channels: a checkpoint stores the step's
 * writes, not the collection, so what a turn writes does not grow with the thread.
 *
 * They never take a snapshot of their own (LangGraph still takes one after 5,000 supersteps, its
 * bound on replay): keel's savers rebuild a delta channel from its writes in one query
 * (persistence/sqlite-saver.ts), and a snapshot of the whole history every few hundred updates
 * would make the bytes a turn writes grow with the thread again.
 */
import { DeltaValue, messagesDeltaReducer } from "@langchain/langgraph";
import { BaseMessage, RemoveMessage } from "@langchain/core/messages";
import { z } from "zod";

/** Updates between a delta channel's own snapshots: never, in practice (see the module comment). */
export const NO_SNAPSHOTS = 1_000_000_000;

/** Most files `seen` remembers: a file read longer ago must be read again before it is edited. */
export const SEEN_WINDOW = 256;

/** LangGraph recognises its messages reducer by this mark (it gives the messages written ids). */
const MESSAGES_REDUCER_MARK = Symbol.for("langgraph.messages_delta_reducer");

/** Message id → position, for the newest value the reducer made (moved to each next value). */
const indexes = new WeakMap<readonly BaseMessage[], Map<string, number>>();

function indexOf(messages: readonly BaseMessage[]): Map<string, number> {
  let index = indexes.get(messages);
  if (!index) {
    index = new Map();
    messages.forEach((m, i) => m.id != null && index!.set(m.id, i));
  }
  indexes.delete(messages);
  return index;
}

const removes = (w: unknown) =>
  (Array.isArray(w) ? w : [w]).some((m) => RemoveMessage.isInstance(m as BaseMessage));

/**
 * LangGraph's messages delta reducer, with the index of ids kept from one write to the next: an
 * append (the usual write) costs what it appends, where the stock reducer indexes the whole history
 * on every write. Replacements and removals go to the stock reducer.
 */
export function appendMessages(state: BaseMessage[], writes: unknown[]): BaseMessage[] {
  const plain = state.length > 0 && !BaseMessage.isInstance(state[0]);
  if (plain || writes.some(removes)) return messagesDeltaReducer(state, writes as never);
  const incoming = messagesDeltaReducer([], writes as never);
  const index = indexOf(state);
  if (incoming.some((m) => m.id != null && index.has(m.id))) {
    const merged = messagesDeltaReducer(state, writes as never);
    indexes.set(merged, indexOf(merged));
    return merged;
  }
  const result = state.concat(incoming);
  incoming.forEach((m, i) => m.id != null && index.set(m.id, state.length + i));
  indexes.set(result, index);
  return result;
}
Object.defineProperty(appendMessages, MESSAGES_REDUCER_MARK, { value: true });

/** The conversation: LangGraph's messages delta channel with the appending reducer. */
export const MessagesChannel = new DeltaValue(
  z.custom<BaseMessage[]>().default(() => []),
  {
    inputSchema: z.custom<BaseMessage | BaseMessage[]>(),
    reducer: appendMessages,
    jsonSchemaExtra: { langgraph_type: "messages", description: "A list of chat messages" },
    snapshotFrequency: NO_SNAPSHOTS,
  },
);

/**
 * The newest `SEEN_WINDOW` files by content hash: each write adds or refreshes paths (a refreshed
 * path becomes the newest), and the oldest fall out.
 */
export function mergeSeen(
  current: Record<string, string>,
  writes: Array<Record<string, string>>,
): Record<string, string> {
  const incoming = new Map(writes.flatMap((w) => Object.entries(w)));
  const added = [...incoming].slice(-SEEN_WINDOW);
  const kept = Object.keys(current).filter((file) => !incoming.has(file));
  // Built afresh rather than with deletes, on an object without a prototype: a file named
  // `__proto__` stays a key, and 256 keys go in at under half the cost of a plain object's.
  const next = Object.create(null) as Record<string, string>;
  for (const file of kept.slice(Math.max(0, kept.length + added.length - SEEN_WINDOW)))
    next[file] = current[file]!;
  for (const [file, hash] of added) next[file] = hash;
  return next;
}

/** Files as the model last saw them, by content hash (read-before-edit). */
export const SeenChannel = new DeltaValue(
  z.record(z.string(), z.string()).default(() => ({})),
  {
    inputSchema: z.record(z.string(), z.string()),
    reducer: mergeSeen,
    snapshotFrequency: NO_SNAPSHOTS,
  },
);
