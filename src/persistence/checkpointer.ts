/**
 * Checkpointers from a URL: `memory`, `sqlite:PATH` (the embedded default, keel's own saver that
 * stores only the channels a step changed: sqlite-saver.ts) or `postgres://…`.
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { KeelSqliteSaver } from "./sqlite-saver.js";

export type CheckpointTarget =
  { kind: "memory" } | { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

export class CheckpointUrlError extends Error {
  override name = "CheckpointUrlError";
}

/** The default store of a workspace's threads. */
export const defaultCheckpoints = (workspace: string) =>
  `sqlite:${path.join(workspace, ".keel", "keel.db")}`;

/** A database URL fit to print: its user and password left out. */
export const withoutCredentials = (url: string) => url.replace(/\/\/[^@/]*@/, "//…@");

/** Parses a `--checkpoints` value; throws `CheckpointUrlError` naming the accepted forms. */
export function parseCheckpointUrl(url: string, cwd = process.cwd()): CheckpointTarget {
  const v = url.trim();
  if (v === "memory") return { kind: "memory" };
  if (v.startsWith("sqlite:")) {
    const p = v.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
    if (!p) throw new CheckpointUrlError("sqlite: needs a file path, e.g. sqlite:.keel/keel.db");
    return { kind: "sqlite", path: path.resolve(cwd, p) };
  }
  if (/^postgres(ql)?:\/\//.test(v)) return { kind: "postgres", url: v };
  throw new CheckpointUrlError(
    `unknown checkpoint store "${url}": use memory, sqlite:PATH or postgres://USER@HOST/DB`,
  );
}

/** Opens the checkpointer a URL names. The caller closes it with `closeCheckpointer`. */
export function createCheckpointer(target: CheckpointTarget): BaseCheckpointSaver {
  switch (target.kind) {
    case "memory":
      return new MemorySaver();
    case "sqlite":
      mkdirSync(path.dirname(target.path), { recursive: true });
      return new KeelSqliteSaver(target.path);
    case "postgres":
      throw new CheckpointUrlError(
        "postgres:// needs an async setup: open it with openPersistence(url)",
      );
  }
}

/** Releases a checkpointer's resources (the SQLite file handle). */
export function closeCheckpointer(saver: BaseCheckpointSaver): void {
  const db = (saver as { db?: { close?: () => void; open?: boolean } }).db;
  if (db?.open) db.close?.();
}

/** Whether a store URL names something that exists: a SQLite file that is not there does not. */
export function storeExists(url: string, cwd = process.cwd()): boolean {
  const target = parseCheckpointUrl(url, cwd);
  return target.kind !== "sqlite" || existsSync(target.path);
}
