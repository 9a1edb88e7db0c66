/** Learned description lines: made from the same misuse in two threads, kept while they help. */
import { describe, expect, it } from "vitest";
import {
  activeLines,
  judgeLessons,
  JUDGE_AFTER_CALLS,
  tallyOf,
  type Tally,
} from "../../../../src/coder/learning/lessons.js";
import type { RunRecord } from "../../../../src/coder/learning/run-record.js";

const tally = (thread: string, calls: number, misuses: number, shown = false): Tally => ({
  thread,
  at: "2026-11-23T00:00:00Z",
  tools: { make_dir: { calls, misuses: misuses ? { "make_dir-file": misuses } : {} } },
  shown: shown ? ["make_dir-file"] : [],
});
const fields = (t: string) => `${t} fields`;

describe("learned description lines", () => {
  it("need the same misuse three times in two threads", () => {
    expect(judgeLessons([tally("a", 3, 3)], fields)).toEqual([]);
    expect(judgeLessons([tally("a", 2, 2), tally("b", 1, 0)], fields)).toEqual([]);
    const [l] = judgeLessons([tally("a", 2, 2), tally("b", 1, 1)], fields);
    expect(l).toMatchObject({
      key: "make_dir-file",
      status: "active",
      before: { calls: 3, misuses: 3 },
    });
    expect(activeLines([l!])).toEqual({ make_dir: { key: "make_dir-file", line: l!.line } });
  });

  it("stay while they lower the misuse rate, and retire when they do not", () => {
    const before = [tally("a", 4, 2), tally("b", 4, 2)]; // rate 1/2
    const helped = judgeLessons([...before, tally("c", JUDGE_AFTER_CALLS, 1, true)], fields);
    expect(helped[0]).toMatchObject({ status: "active", after: { calls: 10, misuses: 1 } });
    const useless = judgeLessons([...before, tally("c", JUDGE_AFTER_CALLS, 5, true)], fields);
    expect(useless[0]).toMatchObject({ status: "retired" });
    expect(activeLines(useless)).toEqual({});
    // too few calls with the line to judge it yet
    expect(judgeLessons([...before, tally("c", 3, 3, true)], fields)[0]!.status).toBe("active");
  });

  it("tally a run's misuses by lesson, and fill in a tool's fields for argument lessons", () => {
    const run = {
      thread: "t",
      calls: [
        { tool: "write_file", ok: false, kind: "invalid_arguments", repairs: [] },
        { tool: "write_file", ok: true, repairs: ["field alias"] },
        { tool: "grep", ok: false, kind: "failed", repairs: [] },
      ],
    } as unknown as RunRecord;
    const t = tallyOf(run, []);
    expect(t.tools).toEqual({
      write_file: { calls: 2, misuses: { "args:write_file": 1 } },
      grep: { calls: 1, misuses: {} },
    });
    const threads = ["a", "b", "c"].map((thread) => ({ ...t, thread }));
    expect(judgeLessons(threads, fields)[0]!.line).toBe(
      "Right: write_file with exactly these fields and types: write_file fields. Wrong: other field names, or missing fields.",
    );
  });
});
