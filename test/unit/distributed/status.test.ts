/** A run's status figures: done, in flight, queued and failed, with rate and ETA. */
import { describe, expect, it } from "vitest";
import type { CensusRow } from "../../../src/distributed/queue.js";
import { formatStatusLine, runStatuses } from "../../../src/distributed/status.js";

describe("run status", () => {
  const a = (run: string, analysis = "a2") => ({ run, analysis });
  const rows: CensusRow[] = [
    { ...a("r1"), state: "completed", worker: "w1", count: 6, firstStart: 0, lastActivity: 9000 },
    {
      ...a("r1"),
      state: "completed",
      worker: "w2",
      count: 4,
      firstStart: 1000,
      lastActivity: 9500,
    },
    { ...a("r1"), state: "active", worker: null, count: 2, firstStart: 8000 },
    { ...a("r1"), state: "created", worker: null, count: 7 },
    { ...a("r1"), state: "retry", worker: null, count: 1 },
    { ...a("r1"), state: "failed", worker: null, count: 1, firstStart: 500 },
    // an earlier analysis of the same run: not counted
    {
      ...a("r1", "a1"),
      state: "completed",
      worker: "w1",
      count: 50,
      firstStart: 0,
      lastActivity: 10,
    },
    { ...a("r0"), state: "completed", worker: "w1", count: 3, firstStart: 0 },
  ];

  it("counts done, in flight, queued and failed per run, per worker, with rate and ETA", () => {
    const [r1, r0] = runStatuses(rows, 10_000);
    expect(r1).toEqual({
      run: "r1",
      analysis: "a2",
      total: 21,
      done: 10,
      inFlight: 2,
      queued: 8,
      failed: 1,
      perWorker: { w1: 6, w2: 4 },
      unitsPerSecond: 1,
      etaSeconds: 10,
    });
    expect(r0).toMatchObject({ run: "r0", done: 3, etaSeconds: 0 });
    expect(formatStatusLine(r1!)).toBe(
      "10/21 done | 2 in flight | 8 queued | 1 failed | 1.00 units/s | eta 10s | workers w1:6 w2:4",
    );
  });

  it("has no rate and no ETA before the first unit is done", () => {
    const [s] = runStatuses(
      [{ run: "r", analysis: "a", state: "created", worker: null, count: 5 }],
      1000,
    );
    expect(s).toMatchObject({ unitsPerSecond: null, etaSeconds: null });
    expect(formatStatusLine(s!)).toContain("– units/s | eta –");
  });
});
