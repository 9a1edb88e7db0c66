/**
 * What keel remembers of a model server across runs, in the run's LangGraph store under
 * ["keel", "servers"], keyed by the server's URL: the request arguments it rejected (issue 27), so
 * the next run's first request leaves them out. Read by the runs (run/model.ts) and `keel doctor`.
 */
import type { BaseStore } from "@langchain/langgraph";
import type { ServerMemory } from "../models/types.js";

const NS = ["keel", "servers"];

/** One server's record. */
export interface ServerRecord {
  url: string;
  /** Request arguments the server rejected, in the order it did. */
  dropped: string[];
  /** When the record last changed (ISO time). */
  at: string;
}

/** The server's record, or undefined when keel never learned anything about it. */
export async function readServer(store: BaseStore, url: string): Promise<ServerRecord | undefined> {
  const item = await store.get(NS, url);
  return item ? (item.value as ServerRecord) : undefined;
}

/** Every server keel remembers something about. */
export async function allServers(store: BaseStore): Promise<ServerRecord[]> {
  const items = await store.search(NS, { limit: 1000 });
  return items.map((i) => i.value as ServerRecord);
}

/**
 * The memory a run's model is built with: what the store holds for `url`, and a hook that adds a
 * newly rejected argument to it. Without a store (a graph compiled without one) the memory lasts
 * the run only. A store that cannot be read or written never fails the run.
 */
export async function serverMemory(
  store: BaseStore | undefined,
  url: string,
): Promise<ServerMemory> {
  const known = store ? await readServer(store, url).catch(() => undefined) : undefined;
  const dropped = [...(known?.dropped ?? [])];
  return {
    dropped,
    onDrop: async (argument) => {
      if (dropped.includes(argument)) return;
      dropped.push(argument);
      const record: ServerRecord = { url, dropped: [...dropped], at: new Date().toISOString() };
      await store?.put(NS, url, record).catch(() => undefined);
    },
  };
}
