/**
 * keel's own git and records obey nothing the workspace can plant: a clean filter set in the
 * workspace's `.gitattributes` and in every config an agent or a cloned repository could reach does
 * not run when keel snapshots; keel's records are in its state folder, never in a `.keel` the
 * workspace holds; a forged undo journal cannot make `keel undo` create or delete a file outside
 * the workspace.
 */
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { workspaceState } from "../../src/files/state.js";
import { blobId, ShadowRepo } from "../../src/undo/shadow.js";
import { applyUndo, planThreadUndo, UndoError } from "../../src/undo/undo.js";
import { tempWorkspace } from "../support/harness.js";

let root: string;
let ws: string;

beforeEach(() => {
  root = tempWorkspace("keel-undo-guard-");
  ws = path.join(root, "ws");
  mkdirSync(ws);
});

describe("keel's git", () => {
  it("runs no clean filter planted in .gitattributes and any config the workspace holds", async () => {
    const pwned = path.join(root, "pwned");
    const filter = `[filter "evil"]\n\tclean = touch ${pwned}; cat\n\tsmudge = cat\n\trequired = true\n`;
    execFileSync("git", ["init", "-q", ws]);
    appendFileSync(path.join(ws, ".git/config"), filter);
    writeFileSync(path.join(ws, ".gitattributes"), "* filter=evil\n");
    writeFileSync(path.join(ws, ".gitconfig"), filter);
    writeFileSync(path.join(ws, "a.txt"), "hello\n");
    const repo = (await ShadowRepo.open(ws))!;
    // what a person's hand could leave in keel's own folder
    const own = workspaceState(ws).undo;
    appendFileSync(path.join(own, "config"), filter);
    // a common folder elsewhere whose config and attributes set the filter (where a command could
    // write keel's state folder: a workspace that holds it)
    execFileSync("git", ["init", "--bare", "-q", path.join(root, "common")]);
    appendFileSync(path.join(root, "common/config"), filter);
    writeFileSync(path.join(root, "common/info/attributes"), "* filter=evil\n");
    writeFileSync(path.join(own, "commondir"), path.join(root, "common"));
    mkdirSync(path.join(own, "hooks"), { recursive: true });
    writeFileSync(path.join(own, "info/attributes"), "* filter=evil\n");
    const again = (await ShadowRepo.open(ws))!;
    const tree = await again.snapshot();
    expect(tree).toMatch(/^[0-9a-f]{40}$/);
    expect(await repo.changes(tree, tree)).toEqual([]);
    expect(existsSync(pwned)).toBe(false);
    // and the content stored is the file's own (no filter ran on it)
    expect(await again.store("a.txt")).toBe(blobId(Buffer.from("hello\n")));
  });

  it("keeps its records in keel's state folder, never in a .keel of the workspace", async () => {
    mkdirSync(path.join(root, "elsewhere"));
    symlinkSync(path.join(root, "elsewhere"), path.join(ws, ".keel"));
    writeFileSync(path.join(ws, "a.txt"), "hello\n");
    const repo = (await ShadowRepo.open(ws))!;
    expect(await repo.store("a.txt")).toBe(blobId(Buffer.from("hello\n")));
    expect(readdirSync(path.join(root, "elsewhere"))).toEqual([]);
    expect(existsSync(path.join(workspaceState(ws).undo, "HEAD"))).toBe(true);
  });
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
