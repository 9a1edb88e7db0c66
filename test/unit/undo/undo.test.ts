/**
 * keel undo and keel diff: a thread that changed nothing is named as such; a forged journal cannot
 * make undo create or delete a file outside the workspace, nor restore one through a link.
 */
import { execFileSync } from "node:child_process";
import {
  writeFileSync,
  appendFileSync,
  existsSync,
  mkdirSync,
  symlinkSync,
  rmSync,
  unlinkSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it, beforeEach } from "vitest";
import { blobId, ShadowRepo } from "../../../src/undo/shadow.js";
import {
  NothingToUndoError,
  threadDiff,
  applyUndo,
  planThreadUndo,
  UndoError,
} from "../../../src/undo/undo.js";
import { tempWorkspace } from "../../support/harness.js";
import { workspaceState } from "../../../src/files/state.js";
import { recordStep } from "../../../src/undo/record.js";

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

let root: string;
let ws: string;

beforeEach(() => {
  root = tempWorkspace("keel-undo-guard-");
  ws = path.join(root, "ws");
  mkdirSync(ws);
});

describe("keel undo and a forged journal", () => {
  /** A journal line as keel writes it, with whatever paths and blobs a forger likes. */
  function forge(files: Array<{ path: string; before: string | null; after: string | null }>) {
    mkdirSync(path.dirname(workspaceState(ws).journal), { recursive: true });
    const line = {
      kind: "step",
      thread: "t1",
      callId: "c1",
      messages: 1,
      label: "write_file x",
      at: new Date().toISOString(),
      files,
    };
    appendFileSync(workspaceState(ws).journal, JSON.stringify(line) + "\n");
  }

  it("neither deletes nor creates a file outside the workspace", async () => {
    const victim = path.join(root, "victim.txt");
    writeFileSync(victim, "keep me\n");
    const repo = (await ShadowRepo.open(ws))!;
    writeFileSync(path.join(ws, "x.txt"), "payload\n");
    const blob = (await repo.store("x.txt"))!;
    symlinkSync(root, path.join(ws, "up"));
    for (const files of [
      [{ path: "../victim.txt", before: null, after: blobId(Buffer.from("keep me\n")) }],
      [{ path: victim, before: null, after: blobId(Buffer.from("keep me\n")) }],
      [{ path: "up/victim.txt", before: null, after: blobId(Buffer.from("keep me\n")) }],
      [{ path: "../created.txt", before: blob, after: null }],
      [{ path: "up/created.txt", before: blob, after: null }],
      [{ path: ".keel/undo/config", before: blob, after: null }],
    ]) {
      forge(files);
      await expect(planThreadUndo(ws, { thread: "t1" })).rejects.toThrow(UndoError);
      await expect(
        applyUndo(ws, {
          thread: "t1",
          steps: [],
          actions: files.map((f) =>
            f.before
              ? { path: f.path, action: "restore" as const, blob: f.before, steps: [1] }
              : { path: f.path, action: "remove" as const, steps: [1] },
          ),
        }),
      ).rejects.toThrow(/not a file of the workspace keel may change/);
      // start the next forgery from an empty journal
      writeFileSync(workspaceState(ws).journal, "");
    }
    expect(existsSync(victim)).toBe(true);
    expect(existsSync(path.join(root, "created.txt"))).toBe(false);
  });
});

describe("keel undo and a link", () => {
  it("keel undo does not restore a file through a link that now leads into .git/hooks", async () => {
    const dir = tempWorkspace("keel-links-undo-");
    const w = path.join(dir, "ws");
    execFileSync("git", ["init", "-q", w]);
    const step = (n: number, paths: string[] | undefined, fn: () => void) =>
      recordStep(
        { workspace: w, thread: "t1", callId: `c${n}`, messages: n, label: `step ${n}`, paths },
        () => Promise.resolve(fn()),
        (why) => {
          throw new Error(why);
        },
      );
    mkdirSync(path.join(w, "docs"));
    const hook = "#!/bin/sh\ntouch pwned\n";
    // step 1 writes the "document", step 2 deletes it; then the folder becomes a link to the hooks
    await step(1, ["docs/pre-commit"], () => writeFileSync(path.join(w, "docs/pre-commit"), hook));
    await step(2, ["docs/pre-commit"], () => unlinkSync(path.join(w, "docs/pre-commit")));
    rmSync(path.join(w, "docs"), { recursive: true });
    symlinkSync(".git/hooks", path.join(w, "docs"));
    const attempt = async () => applyUndo(w, await planThreadUndo(w, { thread: "t1", from: 2 }));
    await expect(attempt()).rejects.toThrow(UndoError);
    await expect(attempt()).rejects.toThrow(/link now leads it to \.git\/hooks\/pre-commit/);
    expect(existsSync(path.join(w, ".git/hooks/pre-commit"))).toBe(false);
  });
});
