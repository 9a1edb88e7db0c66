/**
 * The sandbox's stand-in folders outlive a keel that is killed mid-command: sandbox-runtime
 * removes the empty folders it made for missing protected paths when the command ends, but a
 * SIGKILL, a crash or an out-of-memory kill leaves them — some hundred empty folders named
 * `.mcp.json`, `.npmrc`, `.gitconfig`, `.envrc`… in the person's workspace, where npm, an MCP
 * client or git then fails on a folder in place of its file. So each command's stand-ins are noted
 * outside the workspace (`KeelEnv.standInRecords`) while it runs, and the next command in the
 * workspace, of any keel process, removes those of a command whose keel is gone — each only while
 * it is still an empty folder (a person's file there stays).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { lstatOf } from "../files/door.js";

interface Record {
  pid: number;
  workspace: string;
  /** Workspace-relative. */
  standIns: string[];
}

/** Notes a command's stand-ins; returns what forgets them (when the command has ended). */
export function noteStandIns(dir: string, workspace: string, standIns: string[]): () => void {
  if (standIns.length === 0) return () => {};
  const file = path.join(dir, `${process.pid}-${randomBytes(6).toString("hex")}.json`);
  try {
    mkdirSync(dir, { recursive: true });
    const record: Record = { pid: process.pid, workspace, standIns };
    writeFileSync(file, JSON.stringify(record));
  } catch {
    return () => {}; // a read-only cache: the stand-ins are then only the runtime's to clear
  }
  return () => rmSync(file, { force: true });
}

/** Whether a process is still there (one of another user's is: `EPERM`). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * Removes the stand-ins that commands of keel processes no longer running left in `workspace`, and
 * their records. Returns the workspace-relative folders removed. Never throws.
 */
export function clearLeftStandIns(dir: string, workspace: string): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return removed;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    let record: Record;
    try {
      record = JSON.parse(readFileSync(file, "utf8")) as Record;
    } catch {
      continue;
    }
    if (record.workspace !== workspace || alive(record.pid)) continue;
    for (const rel of record.standIns) {
      if (path.isAbsolute(rel) || rel.split("/").includes("..")) continue;
      const abs = path.join(workspace, rel);
      try {
        if (lstatOf(abs)?.isDirectory() && readdirSync(abs).length === 0) {
          rmdirSync(abs);
          removed.push(rel);
        }
      } catch {
        // one that cannot be removed is left: it is an empty folder
      }
    }
    rmSync(file, { force: true });
  }
  return removed;
}
