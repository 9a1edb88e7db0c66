/**
 * Opens a run's persistence from one `--checkpoints` URL: the checkpointer for the graph's state
 * and the store for the analyst's findings. `memory`, `sqlite:PATH` (one file holds both) or
 * `postgres://…` (LangGraph's PostgresSaver, with keel's delta-history query, and PostgresStore;
 * tables are created on first use) —
 * the path for several workers and for the LangGraph server.
 */
import { existsSync } from "node:fs";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import pg from "pg";
import {
  closeCheckpointer,
  createCheckpointer,
  parseCheckpointUrl,
  withoutCredentials,
  type CheckpointTarget,
} from "./checkpointer.js";
import { KeelPostgresSaver } from "./postgres-saver.js";
import { closeStore, createStore } from "./store.js";

export interface Persistence {
  target: CheckpointTarget;
  checkpointer: BaseCheckpointSaver;
  store: BaseStore;
  /** Closes files and connection pools. */
  close(): Promise<void>;
}

/** pg_advisory_lock key for keel's table setup ("keel" in ASCII). */
const SETUP_LOCK = 0x6b65656c;

export class PersistenceError extends Error {
  override name = "PersistenceError";
}

/** What to check when a Postgres database cannot be reached. */
export const CHECK_SERVER =
  "Check that the server runs and the URL (user, password, database) is right.";

/** Opens checkpointer and store; a database that cannot be reached is a `PersistenceError` naming it. */
export async function openPersistence(url: string, cwd = process.cwd()): Promise<Persistence> {
  const target = parseCheckpointUrl(url, cwd);
  if (target.kind !== "postgres") {
    const { checkpointer, store } = openLocal(target);
    return {
      target,
      checkpointer,
      store,
      close: () => {
        closeCheckpointer(checkpointer);
        closeStore(store);
        return Promise.resolve();
      },
    };
  }
  const checkpointer = new KeelPostgresSaver(target.url);
  const store = PostgresStore.fromConnString(target.url);
  // Workers that start together on a fresh database would race to create the tables: the first
  // takes an advisory lock and migrates, the others wait and find the tables there.
  const lock = new pg.Client({ connectionString: target.url });
  try {
    await lock.connect();
    await lock.query("SELECT pg_advisory_lock($1)", [SETUP_LOCK]);
    try {
      await checkpointer.setup();
      await store.setup();
    } finally {
      await lock.query("SELECT pg_advisory_unlock($1)", [SETUP_LOCK]);
    }
  } catch (err) {
    await Promise.allSettled([checkpointer.end(), store.stop()]);
    throw new PersistenceError(
      `cannot open the Postgres database ${withoutCredentials(target.url)}: ${(err as Error).message}. ${CHECK_SERVER}`,
    );
  } finally {
    await lock.end().catch(() => undefined);
  }
  return {
    target,
    checkpointer,
    store,
    close: async () => {
      await Promise.allSettled([checkpointer.end(), store.stop()]);
    },
  };
}

/**
 * Memory or SQLite; a SQLite file that cannot be opened (not a database, a folder) is a
 * `PersistenceError` naming it.
 */
function openLocal(target: Exclude<CheckpointTarget, { kind: "postgres" }>) {
  let checkpointer: BaseCheckpointSaver | undefined;
  try {
    checkpointer = createCheckpointer(target);
    return { checkpointer, store: createStore(target) };
  } catch (err) {
    if (checkpointer) closeCheckpointer(checkpointer);
    if (target.kind !== "sqlite") throw err;
    const todo = existsSync(target.path)
      ? "Move it aside (a new store starts empty) or pass --checkpoints sqlite:OTHER_FILE"
      : "Pass --checkpoints sqlite:FILE where keel can write, or --checkpoints memory (nothing kept)";
    throw new PersistenceError(
      `cannot open the SQLite database ${target.path}: ${(err as Error).message}. ${todo}.`,
    );
  }
}
