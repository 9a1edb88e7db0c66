/**
 * One keel at a time on a thread: two processes stepping one thread would both run its tool calls
 * (every side effect twice) and each take the other's call in flight for one a crash interrupted.
 * A SQLite store keeps a lock file per thread beside it (`<db>.locks/<hash of the id>`) holding its
 * owner's pid and host; a lock whose process is gone from this host (a crash, SIGKILL) is taken
 * over. A Postgres store takes an advisory lock on the thread, held by a connection of its own for
 * as long as the run: a process that dies drops its connection, and the lock with it. A memory
 * store is one process's own.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import pg from "pg";
import { withoutCredentials, type CheckpointTarget } from "./checkpointer.js";
import { CHECK_SERVER, PersistenceError } from "./open.js";

export class ThreadBusyError extends Error {
  override name = "ThreadBusyError";
}

interface Owner {
  pid: number;
  host: string;
  since: string;
}

/**
 * Takes a thread's lock and returns its release; throws `ThreadBusyError` when a keel holds it.
 * `what` names the lock in that error (default `thread <id>`; the analyst also locks its target).
 */
export async function lockThread(
  target: CheckpointTarget,
  threadId: string,
  what = `thread ${threadId}`,
): Promise<() => Promise<void>> {
  if (target.kind === "postgres") return lockInPostgres(target.url, threadId, what);
  if (target.kind !== "sqlite") return () => Promise.resolve();
  const release = lockFile(target.path, threadId, what);
  return () => Promise.resolve(release());
}

/** The advisory lock's first key: keel's thread locks ("kee" and 1); the second is the thread's hash. */
const THREAD_LOCKS = 0x6b656501;

async function lockInPostgres(
  url: string,
  threadId: string,
  what: string,
): Promise<() => Promise<void>> {
  const key = createHash("sha256").update(threadId).digest().readUInt32BE(0) >>> 1;
  const me = `keel pid ${process.pid} on ${hostname()}`.slice(0, 63);
  const client = new pg.Client({ connectionString: url, application_name: me, keepAlive: true });
  // A connection lost mid-run (a restart, a network cut) loses the lock with it; the run goes on.
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new PersistenceError(
      `cannot lock ${what} in the Postgres database ${withoutCredentials(url)}: ${(err as Error).message}. ${CHECK_SERVER}`,
    );
  }
  try {
    const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS ok", [
      THREAD_LOCKS,
      key,
    ]);
    if (got.rows[0]?.ok) {
      // The session's end releases its locks, also on a connection that no longer answers.
      return () => client.end().catch(() => undefined);
    }
    const holder = await client.query<{ name: string; since: Date }>(
      `SELECT a.application_name AS name, a.backend_start AS since
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid`,
      [THREAD_LOCKS, key],
    );
    const h = holder.rows[0];
    const who = h
      ? `${h.name || "a session without a name"}, since ${new Date(h.since).toISOString()}`
      : "owner unknown";
    throw new ThreadBusyError(
      `${what} is running in another keel (${who}); wait for it to end, or stop it and resume`,
    );
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
}

/** The lock file of a SQLite store's thread (see the module comment). */
function lockFile(db: string, threadId: string, what: string): () => void {
  const dir = `${db}.locks`;
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
      `${what} is running in another keel (${who}); wait for it to end, or stop it and resume. If no keel runs it, delete ${file}`,
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
