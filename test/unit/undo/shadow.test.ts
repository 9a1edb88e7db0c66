/**
 * keel's shadow repository: blobs git itself reads back, a command's changes seen; no clean filter
 * the workspace plants runs when keel snapshots, and keel's records stay in its state folder.
 */
import { execFileSync } from "node:child_process";
import {
  readFileSync,
  writeFileSync,
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  symlinkSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it, beforeEach } from "vitest";
import { blobId, ShadowRepo } from "../../../src/undo/shadow.js";
import { tempWorkspace } from "../../support/harness.js";
import { workspaceState } from "../../../src/files/state.js";

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
