import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lastThread, type StepRecord, type UndoRecord } from "../../src/undo/journal.js";
import { planUndo } from "../../src/undo/plan.js";
import { blobId, ShadowRepo } from "../../src/undo/shadow.js";
import { NothingToUndoError, threadDiff } from "../../src/undo/undo.js";
import { tempWorkspace } from "../support/harness.js";

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

describe("the shadow repository", () => {
  it("stores blobs git itself reads back, with git's ids, and sees a command's changes", async () => {
    const ws = tempWorkspace();
    writeFileSync(path.join(ws, "x.txt"), "one\r\n");
    const repo = (await ShadowRepo.open(ws))!;
    const id = await repo.store("x.txt");
    expect(id).toBe(blobId(readFileSync(path.join(ws, "x.txt"))));
    expect(id).toBe(
      execFileSync("git", ["hash-object", "x.txt"], { cwd: ws, encoding: "utf8" }).trim(),
    );
    expect((await repo.read(id!)).toString()).toBe("one\r\n");
    expect(await repo.store("missing.txt")).toBeNull();
    const before = await repo.snapshot();
    writeFileSync(path.join(ws, "x.txt"), "two\n");
    writeFileSync(path.join(ws, "y.txt"), "y\n");
    const changes = await repo.changes(before, await repo.snapshot());
    expect(changes).toEqual([
      { path: "x.txt", before: id, after: blobId(Buffer.from("two\n")) },
      { path: "y.txt", before: null, after: blobId(Buffer.from("y\n")) },
    ]);
  });
});

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

describe("asking for a thread's changes where keel changed none", () => {
  it("says no thread did, rather than naming an empty list", async () => {
    const ws = tempWorkspace();
    await expect(threadDiff(ws, "t-typo")).rejects.toThrow(
      new NothingToUndoError(
        `thread t-typo changed no files in ${ws}, and no thread did (no undo journal in keel's state)`,
      ),
    );
    await expect(threadDiff(ws)).rejects.toThrow(/keel has changed no files in .*nothing to undo/);
  });
});
