import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lockThread, ThreadBusyError } from "../../src/persistence/thread-lock.js";
import { tempWorkspace } from "../support/harness.js";

/** A store in a fresh folder, and a lock file for thread `t` held by `pid`. */
function storeWithOwner(pid: number, host = hostname()) {
  const target = { kind: "sqlite" as const, path: path.join(tempWorkspace(), "keel.db") };
  const release = lockThread(target, "t");
  const dir = `${target.path}.locks`;
  const file = path.join(dir, readdirSync(dir)[0]!);
  release();
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify({ pid, host, since: "2026-11-25T09:00:00.000Z" }));
  return { target, file };
}

describe("lockThread", () => {
  it("holds a thread until released; another keel on it is refused, naming the owner", () => {
    const { target, file } = storeWithOwner(process.ppid);
    expect(() => lockThread(target, "t")).toThrow(ThreadBusyError);
    expect(() => lockThread(target, "t")).toThrow(
      new RegExp(`thread t is running in another keel \\(pid ${process.ppid} on `),
    );
    expect(existsSync(file)).toBe(true);
    // other threads are free
    lockThread(target, "other")();
  });

  it("takes over a lock whose process has ended (a crash, kill -9)", () => {
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const { target, file } = storeWithOwner(dead);
    const release = lockThread(target, "t");
    expect(existsSync(file)).toBe(true);
    release();
    expect(existsSync(file)).toBe(false);
  });

  it("does not take over a lock held on another host", () => {
    const dead = spawnSync(process.execPath, ["-e", ""]).pid;
    const { target } = storeWithOwner(dead, "elsewhere.example");
    expect(() => lockThread(target, "t")).toThrow(/pid \d+ on elsewhere\.example/);
  });

  it("locks nothing in memory or Postgres", () => {
    expect(() => lockThread({ kind: "memory" }, "t")).not.toThrow();
  });
});
