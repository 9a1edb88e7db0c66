/**
 * A worker's proof of life: a connection of its own to the database holding a session-level
 * advisory lock for the worker's id. The jobs it takes carry the lock and the session's pid; when
 * the process dies (SIGKILL, a crash) the kernel closes the connection, Postgres ends the session
 * and frees the lock, and the next sweep (queue-sql.ts `SWEEP`) puts its jobs back into the queue.
 * A machine that vanishes without closing anything is noticed by TCP keepalives within about 20 s.
 * A lost connection is opened again, with a new lock; until then the worker takes nothing.
 */
import { randomInt, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import pg from "pg";
import { withoutCredentials } from "../persistence/checkpointer.js";
import { CHECK_SERVER, PersistenceError } from "../persistence/open.js";
import type { Holder } from "./queue.js";
import { REGISTER, STOPPED, WORKER_LOCKS } from "./queue-sql.js";

/**
 * The session's keepalives: Postgres drops a connection whose peer stops answering after 5 s idle
 * and 3 probes 5 s apart, or unacknowledged data for 20 s (ignored on a Unix socket).
 */
const KEEPALIVE = [
  "SET tcp_keepalives_idle = 5",
  "SET tcp_keepalives_interval = 5",
  "SET tcp_keepalives_count = 3",
  "SET tcp_user_timeout = 20000",
];

export class WorkerSession {
  private client: pg.Client | undefined;
  private holder: Holder | undefined;
  private reopening: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private readonly url: string,
    readonly id: string,
    readonly name: string,
    private readonly servers: string[],
    private readonly log: (line: string) => void,
  ) {}

  /** Opens the session, takes a lock and registers the worker; a database that cannot be reached is a `PersistenceError`. */
  static async open(
    url: string,
    o: { name: string; servers: string[]; log?: (line: string) => void },
  ): Promise<WorkerSession> {
    const s = new WorkerSession(url, randomUUID(), o.name, o.servers, o.log ?? (() => undefined));
    try {
      await s.connect();
    } catch (err) {
      throw new PersistenceError(
        `cannot open the worker's session on ${withoutCredentials(url)}: ${(err as Error).message}. ${CHECK_SERVER}`,
      );
    }
    return s;
  }

  /** Who holds jobs taken now; undefined while the session is being opened again. */
  current(): Holder | undefined {
    if (!this.holder && !this.closed) this.reopen();
    return this.holder;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: `keel worker ${this.name}`.slice(0, 63),
      keepAlive: true,
      keepAliveInitialDelayMillis: 5000,
      connectionTimeoutMillis: 10_000,
    });
    const lost = () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.holder = undefined;
      if (!this.closed) this.log("the worker's database session ended: opening it again");
    };
    client.on("error", lost);
    client.on("end", lost);
    try {
      await client.connect();
      for (const set of KEEPALIVE) await client.query(set);
      let pid = 0;
      let lock = 0;
      for (let tries = 0; !pid; tries++) {
        if (tries >= 10) throw new Error("no free worker lock after 10 tries");
        lock = randomInt(1, 2 ** 31 - 1);
        const r = await client.query<{ ok: boolean; pid: number }>(
          "SELECT pg_try_advisory_lock($1, $2) AS ok, pg_backend_pid() AS pid",
          [WORKER_LOCKS, lock],
        );
        if (r.rows[0]?.ok) pid = r.rows[0].pid;
      }
      await client.query(REGISTER, [
        this.id,
        this.name,
        hostname(),
        process.pid,
        this.servers,
        lock,
        pid,
      ]);
      this.client = client;
      this.holder = { id: this.id, name: this.name, lock, pid };
    } catch (err) {
      client.removeAllListeners("end");
      await client.end().catch(() => undefined);
      throw err;
    }
  }

  /** Opens the session again in the background, every 2 s until it works or the worker stops. */
  private reopen(): void {
    this.reopening ??= (async () => {
      while (!this.closed && !this.holder) {
        try {
          await this.connect();
          this.log(`session open again (lock ${this.holder!.lock})`);
        } catch (err) {
          this.log(`cannot open the worker's session: ${(err as Error).message}`);
          await new Promise((r) => setTimeout(r, 2000));
        }
      }
      this.reopening = undefined;
    })();
  }

  /** Ends the session (its lock goes with it); `stopped`: the worker left on its own, say so. */
  async close(stopped: boolean): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    this.holder = undefined;
    if (!client) return;
    if (stopped) await client.query(STOPPED, [this.id]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}
