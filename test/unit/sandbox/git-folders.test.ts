/** The folders git would take for a repository's, whatever their name, at the file tools' gate. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitFoldersOn } from "../../../src/sandbox/git-folders.js";
import { protectedEntry } from "../../../src/sandbox/protected.js";
import { tempWorkspace } from "../../support/harness.js";

describe("gitFoldersOn", () => {
  it("the file tools' gate finds the folders git would take for a repository's, whatever their name", () => {
    const w = path.join(tempWorkspace("keel-links-gitfolders-"), "ws");
    mkdirSync(path.join(w, "app/objects"), { recursive: true });
    mkdirSync(path.join(w, "cache/objects"), { recursive: true });
    mkdirSync(path.join(w, "cache/refs"));
    mkdirSync(path.join(w, "src/hooks"), { recursive: true });
    mkdirSync(path.join(w, "src/objects"));
    const on = (rel: string) => gitFoldersOn(w, rel).map((p) => p.path);
    // app/ holds objects: the write of its HEAD makes it a repository's folder, as does any later
    // write there (its config first, then HEAD, is caught at HEAD)
    expect(on("app/config")).toEqual([]);
    expect(on("app/HEAD")).toEqual(["app"]);
    writeFileSync(path.join(w, "app/HEAD"), "ref: refs/heads/main\n");
    expect(on("app/config")).toEqual(["app"]);
    expect(on("app/hooks/pre-commit")).toEqual(["app"]);
    expect(on("app/objects/info/alternates")).toEqual(["app"]);
    // objects and refs: the common folder a commondir can name; its config, hooks and info only
    expect(on("cache/config")).toEqual(["cache/config"]);
    expect(on("cache/hooks/post-checkout")).toEqual(["cache/hooks"]);
    expect(on("cache/Config.worktree")).toEqual(["cache/Config.worktree"]);
    expect(on("cache/notes.md")).toEqual([]);
    // an ordinary project folder is none: React's src/hooks beside src/objects, a file called HEAD
    expect(on("src/hooks/useThing.ts")).toEqual([]);
    expect(on("docs/HEAD")).toEqual([]);
    // the gate asks a person for them (protectedEntry matches what gitFoldersOn names)
    expect(protectedEntry("app/config", gitFoldersOn(w, "app/config"))?.why).toMatch(/repository/);
    expect(protectedEntry("cache/config", gitFoldersOn(w, "cache/config"))?.why).toMatch(
      /commondir/,
    );
  });
});
