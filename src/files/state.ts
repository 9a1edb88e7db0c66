/**
 * keel's own state, one folder per workspace under the person's state folder (`KeelEnv.stateDir`),
 * never in the workspace: a repository anyone can ship may hold a `.keel/` of its own, and keel
 * must not take its undo repository, journal or database for keel's (Claude Code, Codex and
 * gemini-cli keep theirs under the home folder too). A workspace's folder is named by its real
 * path: `<state>/workspaces/<name>-<hash of the real path>`. Folders are made readable by the
 * person only (0700).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readEnv } from "../env.js";

/** Where keel keeps what it knows of one workspace. */
export interface WorkspaceState {
  /** The workspace's own folder in keel's state. */
  dir: string;
  /** The default checkpoint and findings database (SQLite). */
  db: string;
  /** The undo shadow repository (a bare git object store). */
  undo: string;
  /** The undo journal: one JSON line per changing step, undo and run. */
  journal: string;
}

/** The real path of a workspace (the path as given when it does not exist). */
export function realWorkspacePath(workspace: string): string {
  const abs = path.resolve(workspace);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

/** The name of a workspace's folder in keel's state: readable, and unique by its real path. */
export function stateKey(realPath: string): string {
  const name =
    path
      .basename(realPath)
      .replace(/[^A-Za-z0-9._-]/g, "_")
      .slice(0, 40) || "root";
  const hash = createHash("sha256").update(realPath).digest("hex").slice(0, 16);
  return `${name}-${hash}`;
}

/** Where keel keeps `workspace`'s state (nothing is made; see `ensureWorkspaceState`). */
export function workspaceState(workspace: string, stateDir = readEnv().stateDir): WorkspaceState {
  const dir = path.join(stateDir, "workspaces", stateKey(realWorkspacePath(workspace)));
  const undo = path.join(dir, "undo");
  return { dir, db: path.join(dir, "keel.db"), undo, journal: path.join(undo, "steps.jsonl") };
}

/**
 * Makes a state folder (and the folders above it) readable by the person only, and notes in it
 * which workspace it serves (`workspace`, for a person looking through the state folder).
 */
export function ensureStateFolder(dir: string, workspace?: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (workspace !== undefined) {
    const note = path.join(dir, "workspace");
    if (!existsSync(note))
      writeFileSync(note, `${realWorkspacePath(workspace)}\n`, { mode: 0o600 });
  }
  return dir;
}

/** `workspaceState`, its folder made. */
export function openWorkspaceState(workspace: string, stateDir?: string): WorkspaceState {
  const state = workspaceState(workspace, stateDir);
  ensureStateFolder(state.dir, workspace);
  return state;
}
