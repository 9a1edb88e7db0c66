/** The findings store from the same `--checkpoints` URL as the checkpointer. */
import path from "node:path";
import { InMemoryStore, type BaseStore } from "@langchain/langgraph";
import { ensureStateFolder } from "../files/state.js";
import { CheckpointUrlError, type CheckpointTarget } from "./checkpointer.js";
import { SqliteStore } from "./sqlite-store.js";

/** Opens the store a checkpoint URL names (memory or SQLite; the same file as the checkpoints). */
export function createStore(target: CheckpointTarget): BaseStore {
  switch (target.kind) {
    case "memory":
      return new InMemoryStore();
    case "sqlite":
      ensureStateFolder(path.dirname(target.path));
      return new SqliteStore(target.path);
    case "postgres":
      throw new CheckpointUrlError(
        "postgres:// needs an async setup: open it with openPersistence(url)",
      );
  }
}

/** Releases a store's resources. */
export function closeStore(store: BaseStore): void {
  if (store instanceof SqliteStore) store.close();
}
