/** The undo plan from a thread's steps: what each file goes back to, and what is left alone. */
import { describe, expect, it } from "vitest";
import type { StepRecord } from "../../../src/undo/journal.js";
import { planUndo } from "../../../src/undo/plan.js";

const step = (n: number, files: StepRecord["files"]): StepRecord => ({
  kind: "step",
  thread: "t",
  step: n,
  callId: `c${n}`,
  messages: n,
  label: `step ${n}`,
  at: "",
  files,
});

describe("the undo plan", () => {
  const steps = [
    step(1, [{ path: "a", before: "A0", after: "A1" }]),
    step(2, [
      { path: "a", before: "A1", after: "A2" },
      { path: "new", before: null, after: "N1" },
    ]),
    step(3, [
      { path: "gone", before: "G0", after: null },
      { path: "new", before: "N1", after: "N2" },
    ]),
  ];

  it("restores each file to before its first step, removes what the steps created, brings back what they deleted", () => {
    const now = new Map([
      ["a", "A2"],
      ["new", "N2"],
      ["gone", null],
    ]);
    expect(planUndo(steps, now)).toEqual([
      { path: "a", action: "restore", blob: "A0", steps: [1, 2] },
      { path: "gone", action: "restore", blob: "G0", steps: [3] },
      { path: "new", action: "remove", steps: [2, 3] },
    ]);
  });

  it("leaves a file changed after the agent's last step alone, and skips ones already as they were (a created file someone deleted, a deleted file someone restored)", () => {
    const now = new Map([
      ["a", "A-by-a-person"],
      ["new", null],
      ["gone", "G0"],
    ]);
    expect(planUndo(steps, now)).toEqual([
      {
        path: "a",
        action: "keep",
        steps: [1, 2],
        reason: "changed since step 2 (not by the agent); left as it is",
      },
    ]);
  });
});
