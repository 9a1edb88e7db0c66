/**
 * Aftercare, keel's clean-up after a command: what a command made or changed that would run code
 * later is removed or put back — never through a link, never what the person had.
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  writeFileSync,
  linkSync,
  lstatSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
} from "node:fs";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { describe, expect, it, vi } from "vitest";
import { cleanAfter } from "../../../src/sandbox/aftercare.js";
import { markWorkspace, nestedDenies } from "../../../src/sandbox/look.js";
import { git, PERSON_GIT_ENV } from "../../support/git.js";
import { tempWorkspace, freshWorkspace } from "../../support/harness.js";
import type { ToolResult } from "../../../src/tools/types.js";
import { tool } from "../../support/tools.js";

describe("an unfinished rebase or cherry-pick", () => {
  it("one the person had stays", () => {
    const w = freshWorkspace("keel-gap-rebase-own-");
    git(w, "init", "-q");
    for (const m of ["one", "two"]) git(w, "commit", "-q", "--allow-empty", "-m", m);
    git(w, "-c", "sequence.editor=sed -i '1a break'", "rebase", "-q", "-i", "HEAD~1");
    const before = markWorkspace(w);
    expect(cleanAfter(w, before)).toEqual([]);
    expect(existsSync(path.join(w, ".git/rebase-merge"))).toBe(true);
  });
});

describe(".tool-versions: asdf's path: and ref: versions", () => {
  const versions = "nodejs 20.11.0\npython 3.12.1 3.11.7\n";

  it("aftercare puts back the file a command gave one", () => {
    const w = freshWorkspace("keel-gap-asdf-cmd-");
    writeFileSync(path.join(w, ".tool-versions"), versions);
    const before = markWorkspace(w);
    writeFileSync(path.join(w, ".tool-versions"), "nodejs path:./bin/fake-node\n");
    expect(cleanAfter(w, before)[0]).toMatch(/^\.tool-versions \(changed by the command: asdf/);
    expect(readFileSync(path.join(w, ".tool-versions"), "utf8")).toBe(versions);
  });
});

describe("pnpm-workspace.yaml's settings that run code", () => {
  const ws = "packages:\n  - 'packages/*'\n";

  it("aftercare puts back the file a command gave one", () => {
    const w = freshWorkspace("keel-gap-pnpm-cmd-");
    writeFileSync(path.join(w, "pnpm-workspace.yaml"), ws);
    const before = markWorkspace(w);
    writeFileSync(path.join(w, "pnpm-workspace.yaml"), `${ws}onlyBuiltDependencies: [x]\n`);
    expect(cleanAfter(w, before)[0]).toMatch(/^pnpm-workspace\.yaml \(changed by the command/);
    expect(readFileSync(path.join(w, "pnpm-workspace.yaml"), "utf8")).toBe(ws);
  });
});

describe("commitlint, trunk, RuboCop and git's XDG config", () => {
  it("aftercare removes what a command makes of them, and puts back a .rubocop.yml it gave a require", () => {
    const w = freshWorkspace("keel-gap-misc-cmd-");
    writeFileSync(path.join(w, ".rubocop.yml"), "AllCops:\n  NewCops: enable\n");
    mkdirSync(path.join(w, ".trunk"));
    const before = markWorkspace(w);
    mkdirSync(path.join(w, ".config/git"), { recursive: true });
    for (const rel of ["commitlint.config.cjs", ".trunk/trunk.yaml", ".config/git/config"])
      writeFileSync(path.join(w, rel), "x\n");
    writeFileSync(path.join(w, ".rubocop.yml"), "require: ./lib/cop.rb\n");
    expect(cleanAfter(w, before).map((r) => r.split(" (")[0])).toEqual([
      ".config/git",
      ".trunk/trunk.yaml",
      "commitlint.config.cjs",
      ".rubocop.yml",
    ]);
    expect(readFileSync(path.join(w, ".rubocop.yml"), "utf8")).toBe(
      "AllCops:\n  NewCops: enable\n",
    );
  });
});

const text = (r: ToolResult) => (r.ok ? r.output : r.message);

describe("aftercare never follows a link", () => {
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
    const c = { workspace: w, commandTimeoutMs: 5000, outputLimit: 50_000 };
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
});
