/**
 * One keel at a time on a thread: two processes stepping one thread would both run its tool calls
 * (every side effect twice) and each take the other's call in flight for one a crash interrupted.
 * A SQLite store keeps a lock file per thread beside it (`<db>.locks/<hash of the id>`) holding its
 * owner's pid and host; a lock whose process is gone from this host (a crash, SIGKILL) is taken
 * over. A memory store is one process's own; a Postgres store is not locked (docs/cli.md).
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import type { CheckpointTarget } from "./checkpointer.js";

export class ThreadBusyError extends Error {
  override name = "ThreadBusyError";
}

interface Owner {
  pid: number;
  host: string;
  since: string;
}

/** Takes a thread's lock and returns its release; throws `ThreadBusyError` when a keel holds it. */
export function lockThread(target: CheckpointTarget, threadId: string): () => void {
  if (target.kind !== "sqlite") return () => undefined;
  const dir = `${target.path}.locks`;
  const file = path.join(dir, createHash("sha256").update(threadId).digest("hex").slice(0, 32));
  mkdirSync(dir, { recursive: true });
  const me: Owner = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, JSON.stringify(me), { flag: "wx" });
      return () => {
        if (ownerOf(file)?.pid === me.pid) removeFile(file);
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const owner = ownerOf(file);
    if (attempt === 0 && owner && gone(owner)) {
      removeFile(file);
      continue;
    }
    const who = owner ? `pid ${owner.pid} on ${owner.host}, since ${owner.since}` : "owner unknown";
    throw new ThreadBusyError(
      `thread ${threadId} is running in another keel (${who}); wait for it to end, or stop it and resume. If no keel runs it, delete ${file}`,
    );
  }
}

/** The lock's owner; undefined while it is being written or when it cannot be read. */
function ownerOf(file: string): Owner | undefined {
  try {
    const o = JSON.parse(readFileSync(file, "utf8")) as Partial<Owner>;
    return typeof o.pid === "number" && typeof o.host === "string" ? (o as Owner) : undefined;
  } catch {
    return undefined;
  }
}

/** An owner on this host whose process has ended (or is this very process: a lock left behind). */
function gone(owner: Owner): boolean {
  if (owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "EPERM";
  }
}

function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}
