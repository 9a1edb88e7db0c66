/**
 * The coder state's growing collections as LangGraph delta channels: a checkpoint stores the step's
 * writes, not the collection, so what a turn writes does not grow with the thread.
 *
 * Each holds a bounded value — the conversation since the last move out of it (history/archive.ts),
 * the newest files seen, the run's recent calls — and takes a snapshot of it every
 * `SNAPSHOT_EVERY` updates: a resume reads the nearest snapshot and the writes since
 * (persistence/sqlite-saver-sql.ts `HISTORY`), however old the thread.
 */
import { DeltaValue, messagesDeltaReducer } from "@langchain/langgraph";
import { BaseMessage, RemoveMessage } from "@langchain/core/messages";
import { z } from "zod";

/**
 * Updates between a delta channel's snapshots (the conversation's: twice as many, as act and
 * tool-execute each write it once a turn), so every collection takes one about every hundred
 * turns: what a resume replays at most, against the bytes a snapshot of the bounded value adds per
 * turn (bench/README.md).
 */
export const SNAPSHOT_EVERY = 100;

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
 * A write that moves messages out of the conversation (history/archive.ts): their ids, a few dozen
 * bytes each where a `RemoveMessage` apiece would store a serialised message.
 */
export interface MovedOut {
  keel_moved: string[];
}

export const isMovedOut = (w: unknown): w is MovedOut =>
  typeof w === "object" && w !== null && Array.isArray((w as Partial<MovedOut>).keel_moved);

/** Whether a write holds a `MovedOut`. */
export const movesOut = (w: unknown) => (Array.isArray(w) ? w : [w]).some(isMovedOut);

/**
 * LangGraph's messages delta reducer, with the index of ids kept from one write to the next: an
 * append (the usual write) costs what it appends, where the stock reducer indexes the whole history
 * on every write. Replacements and removals go to the stock reducer; a `MovedOut` takes its
 * messages out where it stands among the writes.
 */
export function appendMessages(state: BaseMessage[], writes: unknown[]): BaseMessage[] {
  if (!writes.some(movesOut)) return appendWrites(state, writes);
  let result = state;
  for (const item of writes.flat()) {
    if (!isMovedOut(item)) {
      result = appendWrites(result, [item]);
      continue;
    }
    const gone = new Set(item.keel_moved);
    result = result.filter((m) => m.id == null || !gone.has(m.id));
  }
  return result;
}

function appendWrites(state: BaseMessage[], writes: unknown[]): BaseMessage[] {
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
    inputSchema: z.custom<BaseMessage | MovedOut | Array<BaseMessage | MovedOut>>(),
    reducer: appendMessages,
    jsonSchemaExtra: { langgraph_type: "messages", description: "A list of chat messages" },
    snapshotFrequency: 2 * SNAPSHOT_EVERY,
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
    snapshotFrequency: SNAPSHOT_EVERY,
  },
);
