/**
 * Links lead nowhere outside: every file tool acts on the real path of its target (for a missing
 * path, of its deepest existing ancestor), and the walks (grep, glob, list_dir, analyze_code, the
 * analyst's enumeration) never follow a link out. Links planted as a command would: to a file
 * outside, to /etc, dangling, chained, and to a protected folder inside.
 */
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { ALL_TOOLS } from "../../src/tools/registry.js";
import type { ToolContext, ToolResult } from "../../src/tools/types.js";
import { resolveInWorkspace } from "../../src/tools/workspace-path.js";
import { cleanAfter } from "../../src/sandbox/aftercare.js";
import { gitFoldersOn } from "../../src/sandbox/git-folders.js";
import { markWorkspace, nestedDenies } from "../../src/sandbox/look.js";
import { protectedEntry } from "../../src/sandbox/protected.js";
import { PERSON_GIT_ENV } from "../support/git.js";
import { tempWorkspace } from "../support/harness.js";

const SECRET = "SECRET-BESIDE-THE-WORKSPACE";

let root: string;

let ws: string;

let ctx: ToolContext;

beforeAll(() => {
  root = tempWorkspace("keel-links-");
  ws = path.join(root, "ws");
  mkdirSync(path.join(ws, "src"), { recursive: true });
  writeFileSync(path.join(root, "secret.txt"), SECRET);
  writeFileSync(path.join(ws, "src", "a.ts"), "export const a = 1;\n");
  symlinkSync(path.join(root, "secret.txt"), path.join(ws, "src", "secret-link.ts"));
  symlinkSync(root, path.join(ws, "src", "dir-out"));
  symlinkSync("/etc", path.join(ws, "etc"));
  symlinkSync(path.join(root, "created-through-link.txt"), path.join(ws, "dangling.txt"));
  symlinkSync("src/dir-out", path.join(ws, "chain1"));
  symlinkSync("chain1", path.join(ws, "chain2"));
  symlinkSync(".vscode", path.join(ws, "editor"));
  symlinkSync("src/a.ts", path.join(ws, "inside-link.ts"));
  ctx = { workspace: ws, commandTimeoutMs: 5000, outputLimit: 50_000 };
});

const tool = (name: string) => ALL_TOOLS.find((t) => t.name === name)!;

const run = (name: string, args: Record<string, unknown>): Promise<ToolResult> =>
  tool(name).run(tool(name).schema.parse(args), ctx);

const text = (r: ToolResult) => (r.ok ? r.output : r.message);

describe("file tools act on the real path", () => {
  it("writing through a dangling link creates nothing outside", async () => {
    const r = await run("write_file", { path: "dangling.txt", content: "x" });
    expect(r.ok).toBe(false);
    expect(text(r)).toMatch(/leads nowhere/);
    expect(existsSync(path.join(root, "created-through-link.txt"))).toBe(false);
    expect((await run("write_file", { path: "dangling.txt/x", content: "x" })).ok).toBe(false);
  });
  it("a chain of links that ends outside is refused", async () => {
    for (const p of ["chain2/secret.txt", "chain2", "chain1/secret.txt"]) {
      expect((await run("read_file", { path: p })).ok, p).toBe(false);
      expect((await run("list_dir", { path: p })).ok, p).toBe(false);
    }
  });
  it("a link inside the workspace is followed, and the real path is what the rules see", () => {
    expect(resolveInWorkspace(ws, "inside-link.ts")).toMatchObject({ ok: true, rel: "src/a.ts" });
    // a link to a protected folder names the folder itself: the gate sees .vscode/tasks.json
    expect(resolveInWorkspace(ws, "editor/tasks.json").ok).toBe(false); // dangling until it exists
    mkdirSync(path.join(ws, ".vscode"));
    expect(resolveInWorkspace(ws, "editor/tasks.json")).toMatchObject({
      ok: true,
      rel: ".vscode/tasks.json",
    });
  });
});

describe("walks never follow a link out", () => {
  it("grep over the workspace finds nothing outside (the secret, /etc/passwd)", async () => {
    for (const pattern of ["SECRET-BESIDE", "root:"]) {
      const r = await run("grep", { pattern });
      expect(r.ok).toBe(true);
      expect(text(r)).not.toContain(SECRET);
      expect(text(r)).not.toMatch(/root:.*:0:0/);
    }
    // the workspace's own file through its own link is still found
    expect(text(await run("grep", { pattern: "const a" }))).toContain("src/a.ts:1");
  });

  it("glob lists no names outside", async () => {
    const r = await run("glob", { pattern: "**/*" });
    expect(text(r)).not.toMatch(/passwd|secret|hostname/);
    expect(text(r)).toContain("src/a.ts");
  });

  it("analyze_code on a folder reads nothing through a link", async () => {
    const r = await run("analyze_code", { path: "src" });
    expect(text(r)).not.toContain("secret-link");
    expect(text(r)).not.toContain("dir-out");
  });

  it("a hard link shares its file: it cannot be made to a file outside the sandbox's view", () => {
    // A hard link is the same file under a second name, so no tool can tell it from an ordinary
    // one. What holds: a command cannot make one to a file outside (the sandbox shows none of
    // them, and link() across its mounts fails), so here it is made by the test, as a person
    // could, and it reads as the workspace's own file.
    linkSync(path.join(ws, "src", "a.ts"), path.join(ws, "hard.ts"));
    expect(readFileSync(path.join(ws, "hard.ts"), "utf8")).toContain("const a");
    expect(statSync(path.join(ws, "hard.ts")).nlink).toBe(2);
  });
});

describe("keel's own clean-up and undo never follow a link", () => {
  it("aftercare removes a repository a command made, never what a link in it leads to", () => {
    const dir = tempWorkspace("keel-links-after-");
    const w = path.join(dir, "ws");
    mkdirSync(path.join(dir, "victim"), { recursive: true });
    writeFileSync(path.join(dir, "victim", "keep.txt"), "the user's\n");
    mkdirSync(w);
    const before = markWorkspace(w);
    // what a sandboxed command can leave: links are made with any target, seen or not
    execFileSync("git", ["init", "-q", path.join(w, "a")]);
    rmSync(path.join(w, "a/.git/hooks"), { recursive: true });
    symlinkSync(path.join(dir, "victim"), path.join(w, "a/.git/hooks"));
    execFileSync("git", ["init", "-q", path.join(w, "b")]);
    writeFileSync(path.join(w, "cfg.txt"), "[core]\n\tfsmonitor = touch pwned\n");
    unlinkSync(path.join(w, "b/.git/config"));
    symlinkSync("../../cfg.txt", path.join(w, "b/.git/config"));
    const removed = cleanAfter(w, before);
    expect(readdirSync(path.join(dir, "victim"))).toEqual(["keep.txt"]);
    expect(removed).toEqual([
      expect.stringMatching(/^a\/\.git \(a repository the command made: .*a person approves/),
      expect.stringMatching(/^b\/\.git \(a repository the command made/),
    ]);
    expect(readdirSync(w).sort()).toEqual(["a", "b", "cfg.txt"]);
    expect(readdirSync(path.join(w, "a"))).toEqual([]);
  });

  it("aftercare removes a repository whose config a command hard-linked to another name; write_file writes only its own name", async () => {
    const dir = tempWorkspace("keel-links-hard-");
    const w = path.join(dir, "ws");
    mkdirSync(w);
    const before = markWorkspace(w);
    // what a command can do in a repository it makes: the config under a second, ordinary name
    execFileSync("git", ["init", "-q", path.join(w, "r")]);
    linkSync(path.join(w, "r/.git/config"), path.join(w, "notes.ini"));
    expect(cleanAfter(w, before)).toEqual([expect.stringMatching(/^r\/\.git \(a repository/)]);
    expect(existsSync(path.join(w, "r/.git"))).toBe(false);
    expect(statSync(path.join(w, "notes.ini")).nlink).toBe(1); // a file of no repository now
    // made by hand (a person can), then written by the file tools: the other name keeps its text
    writeFileSync(path.join(w, "plain.txt"), "[core]\n");
    linkSync(path.join(w, "plain.txt"), path.join(w, "twin.txt"));
    const c = { ...ctx, workspace: w };
    const wrote = await tool("write_file").run(
      tool("write_file").schema.parse({ path: "twin.txt", content: "fsmonitor = x\n" }),
      c,
    );
    expect(wrote.ok).toBe(true);
    const edited = await tool("edit_file").run(
      tool("edit_file").schema.parse({ path: "twin.txt", old_text: "x", new_text: "y" }),
      c,
    );
    expect(edited.ok, text(edited)).toBe(true);
    expect(readFileSync(path.join(w, "twin.txt"), "utf8")).toBe("fsmonitor = y\n");
    expect(readFileSync(path.join(w, "plain.txt"), "utf8")).toBe("[core]\n");
    expect(statSync(path.join(w, "plain.txt")).nlink).toBe(1);
    expect(readdirSync(w).sort()).toEqual(["notes.ini", "plain.txt", "r", "twin.txt"]);
  });

  it("aftercare follows git where git goes: a .git file into node_modules, a bare repository by what it holds", () => {
    const dir = tempWorkspace("keel-links-gitfile-");
    const w = path.join(dir, "ws");
    mkdirSync(w);
    // the person's folder named objects, with a file named HEAD beside it: no repository before
    mkdirSync(path.join(w, "data/objects"), { recursive: true });
    writeFileSync(path.join(w, "data/objects/keep.json"), "{}");
    const before = markWorkspace(w);
    // a .git file sends git to a bare repository inside node_modules (never walked)
    execFileSync("git", ["init", "-q", "--bare", path.join(w, "node_modules/r")]);
    writeFileSync(path.join(w, "node_modules/r/hooks/pre-commit"), "#!/bin/sh\ntouch pwned\n");
    mkdirSync(path.join(w, "sub"));
    writeFileSync(path.join(w, "sub/.git"), "gitdir: ../node_modules/r\n");
    // a HEAD beside the person's objects: git would take data/ for a bare repository
    writeFileSync(path.join(w, "data/HEAD"), "ref: refs/heads/main\n");
    const removed = cleanAfter(w, before);
    expect(removed.sort()).toEqual([
      expect.stringMatching(/^data\/HEAD \(a repository the command made/),
      expect.stringMatching(/^node_modules\/r\/HEAD \(a repository/),
      expect.stringMatching(/^node_modules\/r\/objects \(a repository/),
      expect.stringMatching(/^sub\/\.git \(a repository/),
    ]);
    expect(readdirSync(path.join(w, "data/objects"))).toEqual(["keep.json"]);
    // git takes none of them for a repository now
    for (const d of ["data", "sub", "node_modules/r"])
      expect(
        spawnSync("git", ["-C", path.join(w, d), "rev-parse", "--git-dir"], {
          env: { ...process.env, GIT_CEILING_DIRECTORIES: dir },
        }).status,
        d,
      ).not.toBe(0);
  });

  it("aftercare keeps what a command a person approved to write git made: a worktree, its .git file and commondir", () => {
    const w = path.join(tempWorkspace("keel-links-common-"), "ws");
    mkdirSync(w, { recursive: true });
    execFileSync("git", ["init", "-q", w]);
    execFileSync("git", ["-C", w, "commit", "-q", "--allow-empty", "-m", "x"], {
      env: PERSON_GIT_ENV,
    });
    const before = markWorkspace(w);
    execFileSync("git", ["-C", w, "worktree", "add", "-q", path.join(w, "wt")]);
    expect(cleanAfter(w, before, undefined, true)).toEqual([]);
    expect(readFileSync(path.join(w, ".git/worktrees/wt/commondir"), "utf8")).toBe("../..\n");
    expect(existsSync(path.join(w, "wt/.git"))).toBe(true);
    // the same, unapproved (the sandbox kept it from writing .git): the worktree's .git goes
    rmSync(path.join(w, "wt"), { recursive: true });
    execFileSync("git", ["-C", w, "worktree", "prune"]);
    const again = markWorkspace(w);
    execFileSync("git", ["-C", w, "worktree", "add", "-q", path.join(w, "wt")]);
    expect(cleanAfter(w, again)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^wt\/\.git \(a repository/)]),
    );
  });

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

  it("aftercare removes Mercurial's and Jujutsu's redirects a command made, and leaves the person's repository", () => {
    const dir = tempWorkspace("keel-links-config-");
    const w = path.join(dir, "ws");
    mkdirSync(w);
    execFileSync("git", ["init", "-q", path.join(w, "mine")]);
    execFileSync("git", ["-C", path.join(w, "mine"), "config", "alias.co", "checkout"]);
    const before = markWorkspace(w);
    // Mercurial and Jujutsu sent to another folder's config
    mkdirSync(path.join(w, "h/.hg"), { recursive: true });
    writeFileSync(path.join(w, "h/.hg/sharedpath"), "../../evil");
    mkdirSync(path.join(w, "j/.jj"), { recursive: true });
    writeFileSync(path.join(w, "j/.jj/repo"), "../../evil");
    expect(cleanAfter(w, before).sort()).toEqual(["h/.hg/sharedpath", "j/.jj/repo"]);
    // the person's repository and its config are as they were (the sandbox holds them read-only)
    execFileSync("git", ["-C", path.join(w, "mine"), "co", "-q", "-b", "x"]);
  });

  it("aftercare removes a link a command put on the way to a path the person's git config names, not what it leads to", () => {
    const dir = tempWorkspace("keel-links-named-");
    const w = path.join(dir, "ws");
    mkdirSync(path.join(dir, "victim/gen"), { recursive: true });
    writeFileSync(path.join(dir, "victim/gen/run.sh"), "the user's\n");
    mkdirSync(path.join(w, "lib"), { recursive: true });
    execFileSync("git", ["init", "-q", w]);
    execFileSync("git", ["-C", w, "config", "alias.gen", "!sh build/gen/run.sh"]);
    execFileSync("git", ["-C", w, "config", "alias.fmt", "!sh tools/fmt.sh"]);
    execFileSync("git", ["-C", w, "config", "core.hooksPath", ".githooks"]);
    const before = markWorkspace(w);
    expect(before.named.map((n) => n.path).sort()).toEqual([
      ".githooks",
      "build/gen/run.sh",
      "tools/fmt.sh",
    ]);
    // what a command can do: links where the named paths' folders would be, a hooks folder made
    symlinkSync(path.join(dir, "victim"), path.join(w, "build"));
    symlinkSync("lib", path.join(w, "tools"));
    mkdirSync(path.join(w, ".githooks"));
    writeFileSync(path.join(w, ".githooks/pre-commit"), "#!/bin/sh\n");
    const removed = cleanAfter(w, before);
    expect(removed.sort()).toEqual([".githooks", "build", "tools"]);
    expect(readFileSync(path.join(dir, "victim/gen/run.sh"), "utf8")).toBe("the user's\n");
    expect(existsSync(path.join(w, "lib"))).toBe(true);
    for (const p of ["build", "tools", ".githooks"])
      expect(lstatSync(path.join(w, p), { throwIfNoEntry: false }), p).toBeUndefined();
  });

  it("aftercare never stops where a command made a path it cannot look into, and cleans the rest", () => {
    const w = path.join(tempWorkspace("keel-links-notdir-"), "ws");
    mkdirSync(path.join(w, "tools"), { recursive: true });
    writeFileSync(path.join(w, "notes.txt"), "inside\n");
    execFileSync("git", ["init", "-q", w]);
    execFileSync("git", ["-C", w, "config", "alias.fmt", "!sh tools/fmt.sh"]);
    execFileSync("git", ["-C", w, "config", "core.hooksPath", ".githooks"]);
    const before = markWorkspace(w);
    // a git folder whose commondir names a file, a named path's folder made a file, a hook planted
    mkdirSync(path.join(w, "x/objects"), { recursive: true });
    writeFileSync(path.join(w, "x/HEAD"), "ref: refs/heads/main\n");
    writeFileSync(path.join(w, "x/commondir"), "../notes.txt\n");
    rmSync(path.join(w, "tools"), { recursive: true });
    writeFileSync(path.join(w, "tools"), "a file now\n");
    mkdirSync(path.join(w, ".githooks"));
    writeFileSync(path.join(w, ".githooks/pre-commit"), "#!/bin/sh\n");
    expect(() => markWorkspace(w)).not.toThrow();
    expect(cleanAfter(w, before).sort()).toEqual([
      ".githooks",
      expect.stringMatching(/^x\/HEAD \(a repository the command made/),
      expect.stringMatching(/^x\/commondir \(a repository/),
      expect.stringMatching(/^x\/objects \(a repository/),
    ]);
    expect(existsSync(path.join(w, ".githooks"))).toBe(false);
  });

  it("aftercare puts back the person's own link at a named path, and asks each worktree's config", () => {
    const dir = tempWorkspace("keel-links-named-link-");
    const w = path.join(dir, "ws");
    mkdirSync(path.join(dir, "shared-hooks"), { recursive: true });
    mkdirSync(path.join(w, "tools"), { recursive: true });
    execFileSync("git", ["init", "-q", w]);
    execFileSync("git", ["-C", w, "commit", "-q", "--allow-empty", "-m", "x"], {
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "a",
        GIT_AUTHOR_EMAIL: "a@b",
        GIT_COMMITTER_NAME: "a",
        GIT_COMMITTER_EMAIL: "a@b",
      },
    });
    execFileSync("git", ["-C", w, "worktree", "add", "-q", "wt/feature"]);
    symlinkSync(path.join(dir, "shared-hooks"), path.join(w, "tools/hooks"));
    execFileSync("git", ["-C", w, "config", "core.hooksPath", "tools/hooks"]);
    execFileSync("git", ["-C", w, "config", "alias.lint", "!./scripts/lint.sh"]);
    const before = markWorkspace(w);
    expect(before.named.map((n) => n.path)).toEqual(
      expect.arrayContaining(["tools/hooks", "scripts/lint.sh", "wt/feature/scripts/lint.sh"]),
    );
    // the person's link replaced by a folder of hooks; a script planted in the worktree
    unlinkSync(path.join(w, "tools/hooks"));
    mkdirSync(path.join(w, "tools/hooks"));
    writeFileSync(path.join(w, "tools/hooks/pre-commit"), "#!/bin/sh\n");
    mkdirSync(path.join(w, "wt/feature/scripts"));
    writeFileSync(path.join(w, "wt/feature/scripts/lint.sh"), "#!/bin/sh\n");
    const removed = cleanAfter(w, before);
    expect(removed).toEqual(
      expect.arrayContaining([
        "tools/hooks (put back as the link it was)",
        "wt/feature/scripts/lint.sh",
      ]),
    );
    expect(readlinkSync(path.join(w, "tools/hooks"))).toBe(path.join(dir, "shared-hooks"));
    expect(readdirSync(path.join(dir, "shared-hooks"))).toEqual([]);
  });

  it("aftercare removes a folder made where a config names a script, and leaves the project's folders free", () => {
    const w = path.join(tempWorkspace("keel-links-folders-"), "ws");
    mkdirSync(path.join(w, "web"), { recursive: true });
    execFileSync("git", ["init", "-q", w]);
    execFileSync("git", ["-C", w, "config", "alias.dev", "!npm --prefix web/app run dev"]);
    execFileSync("git", ["-C", w, "config", "alias.rel", "!node release.js"]);
    const before = markWorkspace(w);
    // a command scaffolds web/app/ (the project's) and makes release.js a folder node would run
    mkdirSync(path.join(w, "web/app"));
    writeFileSync(path.join(w, "web/app/index.js"), "x\n");
    mkdirSync(path.join(w, "release.js"));
    writeFileSync(path.join(w, "release.js/index.js"), "planted\n");
    expect(cleanAfter(w, before)).toEqual(["release.js"]);
    expect(readFileSync(path.join(w, "web/app/index.js"), "utf8")).toBe("x\n");
    expect(nestedDenies(markWorkspace(w), w).filter((p) => p.startsWith("web"))).toEqual([]);
  });

  it("aftercare never waits on a FIFO, and removes FIFOs, loops and names that are not UTF-8 a command made", () => {
    const w = path.join(tempWorkspace("keel-links-fifo-"), "ws");
    mkdirSync(w, { recursive: true });
    execFileSync("git", ["init", "-q", w]);
    execFileSync("git", ["-C", w, "config", "include.path", "../inc.cfg"]);
    const before = markWorkspace(w);
    // a FIFO where the person's include points: every git command there would wait on it
    execFileSync("mkfifo", [path.join(w, "inc.cfg")]);
    // what a command can leave: a .git FIFO, a repository whose config and commondir are FIFOs,
    // a .git link to itself, and a repository under a name that is not UTF-8
    mkdirSync(path.join(w, "sub"));
    execFileSync("mkfifo", [path.join(w, "sub/.git")]);
    mkdirSync(path.join(w, "r/objects"), { recursive: true });
    writeFileSync(path.join(w, "r/HEAD"), "ref: refs/heads/main\n");
    execFileSync("mkfifo", [path.join(w, "r/config"), path.join(w, "r/commondir")]);
    mkdirSync(path.join(w, "loop"));
    symlinkSync(".git", path.join(w, "loop/.git"));
    const odd = Buffer.concat([Buffer.from(`${w}/x`), Buffer.from([0xff])]);
    mkdirSync(Buffer.concat([odd, Buffer.from("/.git/hooks")]), { recursive: true });
    writeFileSync(Buffer.concat([odd, Buffer.from("/.git/hooks/pre-commit")]), "#!/bin/sh\n");
    const removed = cleanAfter(w, before);
    expect(removed).toEqual(
      expect.arrayContaining([
        "sub/.git (a FIFO, device, dangling .git link or a name that is not UTF-8)",
        "r/config (a FIFO, device, dangling .git link or a name that is not UTF-8)",
        "loop/.git (a FIFO, device, dangling .git link or a name that is not UTF-8)",
        "inc.cfg (a FIFO, device, dangling .git link or a name that is not UTF-8)",
      ]),
    );
    expect(readdirSync(w).filter((n) => n.startsWith("x"))).toEqual([]);
    expect(existsSync(path.join(w, "inc.cfg"))).toBe(false);
  });

  it("aftercare puts back the person's link on the way to a named script, replaced or turned", () => {
    const w = path.join(tempWorkspace("keel-links-onway-"), "ws");
    mkdirSync(path.join(w, "scripts"), { recursive: true });
    writeFileSync(path.join(w, "scripts/lint.sh"), "echo lint\n");
    symlinkSync("scripts", path.join(w, "bin"));
    execFileSync("git", ["init", "-q", w]);
    execFileSync("git", ["-C", w, "config", "alias.lint", "!./bin/lint.sh"]);
    for (const turn of ["replaced", "turned"]) {
      const before = markWorkspace(w);
      if (turn === "replaced") {
        unlinkSync(path.join(w, "bin"));
        mkdirSync(path.join(w, "bin"));
      } else {
        mkdirSync(path.join(w, "other"));
        unlinkSync(path.join(w, "bin"));
        symlinkSync("other", path.join(w, "bin"));
      }
      writeFileSync(path.join(w, "bin/lint.sh"), "planted\n");
      expect(cleanAfter(w, before), turn).toContain("bin (put back as the link it was)");
      expect(readlinkSync(path.join(w, "bin"))).toBe("scripts");
      expect(readFileSync(path.join(w, "bin/lint.sh"), "utf8")).toBe("echo lint\n");
    }
  });

  it("aftercare never puts a link back, nor removes, through a link a command put in the way", () => {
    const dir = tempWorkspace("keel-links-putback-");
    const w = path.join(dir, "ws");
    mkdirSync(path.join(dir, "lint-kit"), { recursive: true });
    mkdirSync(path.join(dir, "victim/lint"), { recursive: true });
    writeFileSync(path.join(dir, "victim/lint/precious.txt"), "the user's\n");
    mkdirSync(path.join(w, "tools"), { recursive: true });
    symlinkSync(path.join(dir, "lint-kit"), path.join(w, "tools/lint"));
    execFileSync("git", ["init", "-q", w]);
    execFileSync("git", ["-C", w, "config", "alias.lint", "!tools/lint/run.sh"]);
    const before = markWorkspace(w);
    // a command moves the person's folder aside and puts a link to a folder beside in its place
    renameSync(path.join(w, "tools"), path.join(w, "tools.x"));
    symlinkSync(path.join(dir, "victim"), path.join(w, "tools"));
    const removed = cleanAfter(w, before);
    expect(removed).toContain("tools");
    expect(readFileSync(path.join(dir, "victim/lint/precious.txt"), "utf8")).toBe("the user's\n");
    expect(lstatSync(path.join(dir, "victim/lint")).isDirectory()).toBe(true);
  });

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

  it("aftercare cleans what the person's global config names in any folder, a repository or not yet", () => {
    const dir = tempWorkspace("keel-links-newrepo-");
    const w = path.join(dir, "ws");
    mkdirSync(w, { recursive: true });
    const global = path.join(dir, "global.gitconfig");
    writeFileSync(global, "[core]\n\thooksPath = .githooks\n");
    vi.stubEnv("GIT_CONFIG_GLOBAL", global);
    try {
      // the person's own folder of that name: held read-only, never removed
      mkdirSync(path.join(w, "mine/.githooks"), { recursive: true });
      const before = markWorkspace(w);
      expect(nestedDenies(before, w)).toContain("mine/.githooks");
      execFileSync("git", ["init", "-q", path.join(w, "app")]);
      mkdirSync(path.join(w, "app/.githooks"));
      writeFileSync(path.join(w, "app/.githooks/pre-commit"), "#!/bin/sh\n");
      // planted before a repository is there, to be one in a later command
      mkdirSync(path.join(w, "notyet/.githooks"), { recursive: true });
      const removed = cleanAfter(w, before);
      expect(removed).toEqual(
        expect.arrayContaining([
          "app/.githooks",
          "notyet/.githooks",
          expect.stringMatching(/^app\/\.git \(a repository the command made/),
        ]),
      );
      expect(existsSync(path.join(w, "app/.githooks"))).toBe(false);
      expect(existsSync(path.join(w, "mine/.githooks"))).toBe(true);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("aftercare follows a link into node_modules to a repository, and a .git link to a gitdir file", () => {
    const w = path.join(tempWorkspace("keel-links-nm-"), "ws");
    mkdirSync(w, { recursive: true });
    // the person's own checkout in node_modules, with a hook of theirs: never cleaned
    execFileSync("git", ["init", "-q", path.join(w, "node_modules/dep")]);
    writeFileSync(path.join(w, "node_modules/dep/.git/hooks/pre-commit"), "#!/bin/sh\n");
    for (const t = Date.now(); Date.now() < t + 20;); // there before keel first looked
    const before = markWorkspace(w);
    symlinkSync("node_modules/dep", path.join(w, "dep-src"));
    // what one command can leave: a repository in node_modules (not walked) reached by a link,
    // and a .git link to a gitdir file naming a repository in node_modules
    execFileSync("git", ["init", "-q", path.join(w, "node_modules/x")]);
    writeFileSync(path.join(w, "node_modules/x/.git/hooks/pre-commit"), "#!/bin/sh\n");
    symlinkSync("node_modules/x", path.join(w, "app"));
    execFileSync("git", ["init", "-q", "--bare", path.join(w, "node_modules/.cache/r")]);
    writeFileSync(path.join(w, "node_modules/.cache/r/hooks/pre-commit"), "#!/bin/sh\n");
    mkdirSync(path.join(w, "sub"));
    writeFileSync(path.join(w, "sub/gf"), "gitdir: ../node_modules/.cache/r\n");
    symlinkSync("gf", path.join(w, "sub/.git"));
    const removed = cleanAfter(w, before);
    expect(removed.sort()).toEqual([
      expect.stringMatching(/^node_modules\/\.cache\/r\/HEAD \(a repository the command made/),
      expect.stringMatching(/^node_modules\/\.cache\/r\/objects \(a repository/),
      expect.stringMatching(/^node_modules\/x\/\.git \(a repository/),
      expect.stringMatching(/^sub\/\.git \(a repository/),
    ]);
    expect(existsSync(path.join(w, "node_modules/dep/.git/hooks/pre-commit"))).toBe(true);
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
