/**
 * Checkpointers from a URL: `memory`, `sqlite:PATH` (the embedded default, keel's own saver that
 * stores only the channels a step changed: sqlite-saver.ts) or `postgres://…`.
 */
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { lstatOf } from "../files/door.js";
import { ensureStateFolder, workspaceState } from "../files/state.js";
import { KeelSqliteSaver } from "./sqlite-saver.js";

export type CheckpointTarget =
  { kind: "memory" } | { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };

export class CheckpointUrlError extends Error {
  override name = "CheckpointUrlError";
}

/**
 * The default store of a workspace's threads: a SQLite file in the workspace's folder of keel's
 * state (`files/state.ts`), never in the workspace.
 */
export const defaultCheckpoints = (workspace: string) => `sqlite:${workspaceState(workspace).db}`;

/** Where keel kept a workspace's threads before its state moved out of the workspace. */
export const OLD_STORE = ".keel/keel.db";

/**
 * What to say when a workspace holds a `.keel/keel.db`: keel no longer opens it by default (an older
 * keel's, or one a repository shipped), and how to open it. Said once per workspace (a mark in its
 * state folder); undefined when there is no such file or it was said.
 */
export function oldStoreNote(workspace: string): string | undefined {
  const old = path.join(workspace, OLD_STORE);
  if (!lstatOf(old)) return undefined;
  const state = workspaceState(workspace);
  const mark = path.join(state.dir, "old-store-noted");
  if (existsSync(mark)) return undefined;
  try {
    ensureStateFolder(state.dir, workspace);
    writeFileSync(mark, `${new Date().toISOString()}\n`);
  } catch {
    // a state folder that cannot be written: said again next time
  }
  return [
    `keel keeps a workspace's threads outside it now, in ${state.db}.`,
    `${old} (an older keel's, or one that came with the repository) is not opened.`,
    `If it is yours, its threads are there with --checkpoints sqlite:${old}; the changes an older keel recorded in .keel/undo are not shown by keel diff or undone by keel undo.`,
    "(Said once for this workspace.)",
  ].join(" ");
}

/** A database URL fit to print: its user and password left out. */
export const withoutCredentials = (url: string) => url.replace(/\/\/[^@/]*@/, "//…@");

/** Parses a `--checkpoints` value; throws `CheckpointUrlError` naming the accepted forms. */
export function parseCheckpointUrl(url: string, cwd = process.cwd()): CheckpointTarget {
  const v = url.trim();
  if (v === "memory") return { kind: "memory" };
  if (v.startsWith("sqlite:")) {
    const p = v.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
    if (!p) throw new CheckpointUrlError("sqlite: needs a file path, e.g. sqlite:threads.db");
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
      ensureStateFolder(path.dirname(target.path));
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
