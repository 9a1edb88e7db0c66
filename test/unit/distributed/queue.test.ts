/** The job queue's pure parts: a job's priority by size, and a deadlock on opening tried again. */
import { describe, expect, it } from "vitest";
import { retryDeadlock, sizePriority } from "../../../src/distributed/queue.js";

describe("job priority", () => {
  it("grows by one per doubling of the unit's size from 1 KB: large units are taken first", () => {
    expect([0, 500, 1024, 1025, 2048, 4096, 1024 * 1024].map(sizePriority)).toEqual([
      0, 0, 0, 1, 1, 2, 10,
    ]);
  });
});

describe("opening the queue", () => {
  it("is tried again when Postgres ends it with a deadlock, and only then", async () => {
    let calls = 0;
    const deadlock = Object.assign(new Error("deadlock detected"), { code: "40P01" });
    const opened = await retryDeadlock(() =>
      ++calls < 3 ? Promise.reject(deadlock) : Promise.resolve("open"),
    );
    expect([opened, calls]).toEqual(["open", 3]);

    calls = 0;
    await expect(
      retryDeadlock(() => {
        calls++;
        return Promise.reject(new Error("password authentication failed"));
      }),
    ).rejects.toThrow(/password/);
    expect(calls).toBe(1);

    calls = 0;
    await expect(
      retryDeadlock(() => {
        calls++;
        return Promise.reject(deadlock);
      }, 2),
    ).rejects.toThrow(/deadlock/);
    expect(calls).toBe(2);
  });
});
