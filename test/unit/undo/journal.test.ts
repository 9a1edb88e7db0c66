/** The undo journal: which thread keel undo and keel diff take by default. */
import { describe, expect, it } from "vitest";
import { lastThread, type StepRecord, type UndoRecord } from "../../../src/undo/journal.js";

describe("the thread keel undo and keel diff take by default", () => {
  const step = (thread: string, n: number): StepRecord => ({
    kind: "step",
    thread,
    step: n,
    callId: `${thread}-${n}`,
    messages: 2,
    label: "write_file a.txt",
    at: "2026-11-27T00:00:00Z",
    files: [],
  });
  const undo = (thread: string, steps: number[]): UndoRecord => ({
    kind: "undo",
    thread,
    steps,
    at: "2026-11-27T00:00:00Z",
  });
  it("is the thread with the newest step not undone: undoing again goes on to the thread before", () => {
    const lines = [step("a", 1), step("a", 2), step("b", 1)];
    expect(lastThread(lines)).toBe("b");
    expect(lastThread([...lines, undo("b", [1])])).toBe("a");
    expect(lastThread([...lines, undo("a", [2])])).toBe("b");
    expect(lastThread([...lines, undo("b", [1]), undo("a", [1, 2])])).toBe("b");
    expect(lastThread([])).toBe(undefined);
  });
});
