/** One step of the analyst's units or folders: what it takes, within STEP_SPAN. */
import { describe, expect, it } from "vitest";
import { stepOf, STEP_SPAN } from "../../../src/analyst/steps.js";

describe("one step of units or folders", () => {
  const items = Array.from({ length: 1200 }, (_, i) => i);
  const reads: number[] = [];
  const read = (done: Set<number>) => (slice: number[]) => {
    reads.push(slice.length);
    return Promise.resolve(slice.map((i) => (done.has(i) ? i : undefined)));
  };

  it("takes every reused item and up to a batch of work, within STEP_SPAN, reading records in growing slices", async () => {
    reads.length = 0;
    const all = new Set(items);
    const s = await stepOf(items, 0, 2, read(all), (_, r) => r !== undefined);
    expect([s.end, s.reused.length, s.work]).toEqual([STEP_SPAN, STEP_SPAN, []]);
    expect(reads).toEqual([2, 8, 32, 128, 342]);
    reads.length = 0;
    const none = await stepOf(items, 100, 2, read(new Set()), (_, r) => r !== undefined);
    expect([none.end, none.reused, none.work]).toEqual([102, [], [100, 101]]);
    expect(reads).toEqual([2]); // the first run reads one record per item
    const some = await stepOf(items, 0, 2, read(new Set([0, 1, 3])), (_, r) => r !== undefined);
    expect([some.end, some.reused, some.work]).toEqual([5, [0, 1, 3], [2, 4]]);
  });

  it("keeps work that may not share the step for the next (folders: one depth at a time)", async () => {
    const folders = ["a/b", "c/d", "a", "."];
    const s = await stepOf(
      folders,
      0,
      4,
      () => Promise.resolve([undefined, undefined, undefined, undefined]),
      () => false,
      (work, f) => f.split("/").length === work[0]!.split("/").length,
    );
    expect([s.end, s.work]).toEqual([2, [0, 1]]);
  });
});
