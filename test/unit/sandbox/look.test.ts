/** keel's look over the workspace before a command: what the sandbox holds read-only, and what git names. */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { cleanAfter } from "../../../src/sandbox/aftercare.js";
import { markWorkspace, nestedDenies } from "../../../src/sandbox/look.js";
import { git } from "../../support/git.js";
import { tempWorkspace, freshWorkspace } from "../../support/harness.js";

describe("lazygit's repository config", () => {
  it("the sandbox holds a repository's whole; for a git write a person approved, its lazygit.yml", () => {
    const w = freshWorkspace("keel-gap-gitdir-");
    git(w, "init", "-q");
    mkdirSync(path.join(w, "sub"));
    git(path.join(w, "sub"), "init", "-q");
    writeFileSync(path.join(w, "sub/.git/lazygit.yml"), "git:\n  paging:\n    pager: id\n");
    const before = markWorkspace(w);
    expect(nestedDenies(before, w)).toContain("sub/.git");
    expect(nestedDenies(before, w)).not.toContain("sub/.git/lazygit.yml");
    expect(nestedDenies(before, w, true)).toContain("sub/.git/lazygit.yml");
    expect(nestedDenies(before, w, true)).not.toContain("sub/.git");
    // a repository a command made, another tool's file in it: all of it goes
    mkdirSync(path.join(w, "new"));
    git(path.join(w, "new"), "init", "-q");
    writeFileSync(path.join(w, "new/.git/lazygit.yml"), "git:\n  paging:\n    pager: id\n");
    expect(cleanAfter(w, before)).toEqual([expect.stringMatching(/^new\/\.git \(a repository/)]);
    expect(existsSync(path.join(w, "new/.git"))).toBe(false);
    expect(existsSync(path.join(w, "sub/.git/lazygit.yml"))).toBe(true);
  });
});

describe("markWorkspace and nestedDenies", () => {
  it("the person's own config is read where the workspace cannot change it: a .git git rejects does not unname it", () => {
    const dir = tempWorkspace("keel-links-garbage-");
    const w = path.join(dir, "ws");
    mkdirSync(w, { recursive: true });
    writeFileSync(path.join(w, ".git"), "garbage\n");
    const global = path.join(dir, "global.gitconfig");
    writeFileSync(global, "[core]\n\thooksPath = .githooks\n");
    vi.stubEnv("GIT_CONFIG_GLOBAL", global);
    try {
      expect(markWorkspace(w).deep).toEqual([".githooks"]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("the sandbox holds at most so many paths read-only: thousands of repositories do not stop every command", () => {
    const w = path.join(tempWorkspace("keel-links-many-"), "ws");
    const repos = new Set<string>();
    for (let i = 0; i < 800; i++) {
      mkdirSync(path.join(w, `r${i}/hooks`), { recursive: true });
      writeFileSync(path.join(w, `r${i}/config`), "");
      repos.add(`r${i}`);
    }
    const marks = {
      nested: [],
      named: [],
      odd: new Map(),
      repos,
      deep: [],
      since: 0,
      at: 0,
      bytecode: [],
      settings: new Map(),
    };
    expect(nestedDenies(marks, w).length).toBe(500);
    expect(nestedDenies(marks, w, true).length).toBe(500);
  });

  it("without git installed nothing is named, and the look does not say git was slow", () => {
    const w = path.join(tempWorkspace("keel-links-nogit-"), "ws");
    mkdirSync(w, { recursive: true });
    const was = process.env.PATH;
    process.env.PATH = path.join(w, "no-such-bin");
    try {
      const marks = markWorkspace(w);
      expect(marks.named).toEqual([]);
      expect(marks.namedIncomplete).toBeUndefined();
    } finally {
      process.env.PATH = was;
    }
  });

  it("a workspace too big to look over whole is said to be, not passed over in silence", () => {
    const dir = tempWorkspace("keel-links-flood-");
    const w = path.join(dir, "ws");
    mkdirSync(path.join(w, "cache"), { recursive: true });
    for (let i = 0; i < 50; i++) writeFileSync(path.join(w, "cache", `f${i}`), "");
    const before = markWorkspace(w, 40);
    expect(before.incomplete).toBe(true);
    expect(cleanAfter(w, before, 40)).toEqual([
      "(keel checked only the first 40 entries of the workspace: files past them that run code later were not looked for)",
    ]);
    expect(markWorkspace(w).incomplete).toBeUndefined();
  });
});
