import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { describe, expect, inject, it } from "vitest";
import pg from "pg";
import { PersistenceError } from "../../../src/persistence/open.js";
import { lockThread, ThreadBusyError } from "../../../src/persistence/thread-lock.js";
import { closedPort } from "../../support/cli.js";
import { tempWorkspace } from "../../support/harness.js";

/** A store in a fresh folder, and a lock file for thread `t` held by `pid`. */
async function storeWithOwner(pid: number, host = hostname()) {
  const target = { kind: "sqlite" as const, path: path.join(tempWorkspace(), "keel.db") };
  const release = await lockThread(target, "t");
  const dir = `${target.path}.locks`;
  const file = path.join(dir, readdirSync(dir)[0]!);
  await release();
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify({ pid, host, since: "2026-11-25T09:00:00.000Z" }));
  return { target, file };
}

describe("lockThread", () => {
  it("holds a thread until released; another keel on it is refused, naming the owner", async () => {
    const { target, file } = await storeWithOwner(process.ppid);
    await expect(lockThread(target, "t")).rejects.toThrow(ThreadBusyError);
    await expect(lockThread(target, "t")).rejects.toThrow(
      new RegExp(`thread t is running in another keel \\(pid ${process.ppid} on `),
    );
    expect(existsSync(file)).toBe(true);
    // other threads are free
    await (
      await lockThread(target, "other")
    )();
  });

  it("takes over a lock whose process has ended (a crash, kill -9)", async () => {
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const { target, file } = await storeWithOwner(dead);
    const release = await lockThread(target, "t");
    expect(existsSync(file)).toBe(true);
    await release();
    expect(existsSync(file)).toBe(false);
  });

  it("does not take over a lock held on another host", async () => {
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const { target } = await storeWithOwner(dead, "elsewhere.example");
    await expect(lockThread(target, "t")).rejects.toThrow(/pid \d+ on elsewhere\.example/);
  });

  it("locks nothing in memory", async () => {
    await expect(lockThread({ kind: "memory" }, "t")).resolves.toBeTypeOf("function");
  });

  it("Postgres: an advisory lock per thread, held by its own connection; a process that dies lets go", async () => {
    const target = { kind: "postgres" as const, url: inject("pgUrl") };
    const release = await lockThread(target, "pg-thread");
    await expect(lockThread(target, "pg-thread")).rejects.toThrow(
      new RegExp(`thread pg-thread is running in another keel \\(keel pid ${process.pid} on `),
    );
    // other threads are free
    await (
      await lockThread(target, "pg-other")
    )();
    await release();
    const again = await lockThread(target, "pg-thread");
    await again();
    // a process holding the lock that is killed: its connection ends, and the thread is free
    const holder = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "-e",
        `import("${path.resolve("src/persistence/thread-lock.ts")}").then(async (m) => { await m.lockThread(${JSON.stringify(target)}, "pg-crash"); console.log("held"); setInterval(() => {}, 1000); })`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve) => holder.stdout.once("data", () => resolve()));
    await expect(lockThread(target, "pg-crash")).rejects.toThrow(ThreadBusyError);
    holder.kill("SIGKILL");
    await new Promise((resolve) => holder.once("close", resolve));
    let taken: (() => Promise<void>) | undefined;
    for (let i = 0; i < 50 && !taken; i++)
      taken = await lockThread(target, "pg-crash").catch(async () => {
        await new Promise((r) => setTimeout(r, 100));
        return undefined;
      });
    expect(taken).toBeTypeOf("function");
    await taken!();
  }, 30_000);

  it("Postgres: a database it cannot reach is a PersistenceError naming it, without its password", async () => {
    const url = `postgres://keel:secret@127.0.0.1:${await closedPort()}/keel`;
    const refused = lockThread({ kind: "postgres", url }, "t");
    await expect(refused).rejects.toThrow(PersistenceError);
    await expect(refused).rejects.toThrow(
      /cannot lock thread t in the Postgres database postgres:\/\/…@127\.0\.0\.1/,
    );
    await expect(refused).rejects.not.toThrow(/secret/);
  });

  it("Postgres: a lock whose connection the server ends (a restart) is lost, without stopping the process", async () => {
    const url = inject("pgUrl");
    const release = await lockThread({ kind: "postgres", url }, "pg-dropped");
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const ended = await admin.query<{ done: boolean }>(
      `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = $1`,
      [`keel pid ${process.pid} on ${hostname()}`.slice(0, 63)],
    );
    await admin.end();
    expect(ended.rows.map((r) => r.done)).toEqual([true]);
    await new Promise((r) => setTimeout(r, 200));
    // the thread is free again, and the old release is harmless
    await (
      await lockThread({ kind: "postgres", url }, "pg-dropped")
    )();
    await release();
  });
});
