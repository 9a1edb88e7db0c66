/**
 * The one list of protected workspace paths: anchored on sandbox-runtime's own, matched at any
 * depth, folded as file systems fold names; what the sandbox holds of them; and the gaps a security
 * review found (lazygit, aider and direnv's .env, direnv's other .envrcs, commitlint, trunk,
 * git's XDG config), each asked of the gate.
 */
import { readFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  COMMAND_PROTECTED,
  isCommandProtected,
  isKeelOwn,
  PROTECTED_PATHS,
  protectedEntry,
  removedWhenMade,
  sandboxDenyPaths,
} from "../../../src/sandbox/protected.js";
import { cleanAfter } from "../../../src/sandbox/aftercare.js";
import { markWorkspace } from "../../../src/sandbox/look.js";
import { gateDecision } from "../../support/gate.js";
import { freshWorkspace } from "../../support/harness.js";

/** sandbox-runtime's DANGEROUS_FILES and DANGEROUS_DIRECTORIES, read from its installed source. */
function runtimeList(): string[] {
  const main = createRequire(import.meta.url).resolve("@anthropic-ai/sandbox-runtime");
  const src = readFileSync(path.join(path.dirname(main), "sandbox", "sandbox-utils.js"), "utf8");
  const list = (name: string) =>
    [
      ...(new RegExp(`export const ${name} = \\[([^\\]]*)\\]`).exec(src)?.[1] ?? "").matchAll(
        /'([^']+)'/g,
      ),
    ].map((m) => m[1]!);
  const names = [...list("DANGEROUS_FILES"), ...list("DANGEROUS_DIRECTORIES")];
  expect(names.length).toBeGreaterThanOrEqual(10);
  return names;
}

describe("PROTECTED_PATHS", () => {
  it("holds every dangerous file and folder of sandbox-runtime's own list, and git's hooks and config", () => {
    const ours = PROTECTED_PATHS.map((p) => p.path);
    for (const name of [...runtimeList(), ".git/hooks", ".git/config", ".claude/commands"])
      expect(protectedEntry(name), name).toBeDefined();
    expect(ours).toEqual(expect.arrayContaining([".envrc", ".npmrc", ".gitattributes", ".keel"]));
  });
  it("matches at any depth and below a protected folder; not look-alikes or the project's own files", () => {
    expect(protectedEntry(".vscode/tasks.json")?.path).toBe(".vscode");
    expect(protectedEntry("packages/app/.vscode/settings.json")?.path).toBe(".vscode");
    expect(protectedEntry("sub/.git/hooks/pre-commit")?.path).toBe(".git/hooks");
    expect(protectedEntry("./.mcp.json")?.path).toBe(".mcp.json");
    expect(protectedEntry("a\\.envrc")?.path).toBe(".envrc");
    expect(protectedEntry("sub/.git")?.path).toBe(".git");
    for (const ok of [
      "src/app.ts",
      "package.json",
      "Makefile",
      ".editorconfig",
      "vscode/x",
      ".mcp.json.bak",
      "docs/.gitignore",
    ])
      expect(protectedEntry(ok), ok).toBeUndefined();
    // run by a program opened or started in the folder: vim's exrc, rustup and cargo (editors run
    // cargo on open), mise on entering, Emacs, pylint
    for (const [p, entry] of <[string, string][]>[
      [".vimrc", ".vimrc"],
      ["sub/_vimrc", "_vimrc"],
      ["_exrc", "_exrc"],
      [".gvimrc", ".gvimrc"],
      ["rust-toolchain.toml", "rust-toolchain.toml"],
      ["crates/a/rust-toolchain", "rust-toolchain"],
      [".cargo/config.toml", ".cargo/config.toml"],
      ["x/.cargo/config", ".cargo/config"],
      ["mise.local.toml", "mise.local.toml"],
      [".mise/config.toml", ".mise"],
      ["mise/config.toml", "mise/config.toml"],
      [".config/mise/conf.d/a.toml", ".config/mise"],
      [".dir-locals-2.el", ".dir-locals-2.el"],
      ["pylintrc.toml", "pylintrc.toml"],
      ["lefthook.yml", "lefthook.yml"],
      [".config/lefthook.yml", "lefthook.yml"],
      ["pkg/.lefthook-local.yml", ".lefthook-local.yml"],
    ])
      expect(protectedEntry(p)?.path, p).toBe(entry);
    for (const ok of [".cargo/registry/x", "mise/other.toml", "rust-toolchain.md", "vimrc.txt"])
      expect(protectedEntry(ok), ok).toBeUndefined();
    expect(isKeelOwn(".keel/undo/steps.jsonl")).toBe(true);
    expect(isKeelOwn("src/.keel")).toBe(false);
  });
});

describe("names a file system folds", () => {
  it("match as the file system would: case, Unicode forms, ignorables, trailing dots, streams, short names", () => {
    const cases: [string, string][] = [
      [".VSCode/tasks.json", ".vscode"],
      [".MCP.json", ".mcp.json"],
      ["pkg/.Envrc", ".envrc"],
      [".GIT/hooks/pre-commit", ".git/hooks"],
      [".git/HOOKS/pre-commit", ".git/hooks"],
      [".v\u017Fcode/tasks.json", ".vscode"], // ſ folds to s
      [".vscode\u200b/tasks.json", ".vscode"],
      [".g\u200cit/hooks/x", ".git/hooks"], // HFS+ ignored U+200C (git's CVE-2014-9390)
      [".vscode. /tasks.json", ".vscode"], // Windows drops trailing dots and spaces
      [".mcp.json::$DATA", ".mcp.json"], // an NTFS stream of the file
      ["VSCODE~1/tasks.json", ".vscode"], // Windows short names
      ["GIT~1/hooks/pre-commit", ".git/hooks"],
      ["MCP~1.JSO", ".mcp.json"],
      ["VS1A2B~1/tasks.json", ".vscode"],
      [".git/config.worktree", ".git/config.worktree"],
      ["sub/.hg/hgrc", ".hg/hgrc"],
      [".jj/repo/config.toml", ".jj/repo/config.toml"],
      ["mise.toml", "mise.toml"],
      [".pre-commit-config.yaml", ".pre-commit-config.yaml"],
      // other coding agents' project config, interpreters' start-up files
      ["opencode.json", "opencode.json"],
      ["pkg/.kiro/hooks/lint.kiro.hook", ".kiro"],
      [".amazonq/mcp.json", ".amazonq"],
      [".aider.conf.yml", ".aider.conf.yml"],
      [".Rprofile", ".Rprofile"],
      [".rprofile", ".Rprofile"], // the list spells it as R does; names still fold
      ["analysis/.RPROFILE", ".Rprofile"],
      [".pylintrc", ".pylintrc"],
    ];
    for (const [rel, entry] of cases) expect(protectedEntry(rel)?.path, rel).toBe(entry);
    for (const ok of [
      "src/hooks/useX.ts",
      "docs/vscode.md",
      "config~1.ts",
      "mise.toml.example",
      "src/profile.R",
      "opencode.md",
    ])
      expect(protectedEntry(ok), ok).toBeUndefined();
    expect(isKeelOwn(".KEEL/settings.json")).toBe(true);
    expect(isKeelOwn(".\u212Aeel/undo/steps.jsonl")).toBe(true); // the Kelvin sign is K
    expect(isKeelOwn("KEEL~1\\undo")).toBe(true);
    expect(isKeelOwn("keel/x")).toBe(false);
  });
  it("a command's own protected paths: the path itself, any depth, folded; not inside .git", () => {
    for (const rel of [
      "sub/.git",
      "vendor/lib/.GIT",
      "sub/.vscode",
      "sub/.VSCODE",
      "a/b/.envrc",
      ".hg/hgrc",
      "x/.hg/hgrc",
      "r/.Rprofile",
      "r/.rprofile",
    ])
      expect(isCommandProtected(rel), rel).toBe(true);
    for (const rel of ["sub/.vscode/tasks.json", "sub/.git/hooks", "sub/.git/config", "src"])
      expect(isCommandProtected(rel), rel).toBe(false);
  });
});

describe("sandboxDenyPaths", () => {
  const WS = "/w";
  it("denies what exists, holds what does not with a folder placeholder, and .git whole", () => {
    const exists = (rel: string) => [".vscode", ".git", ".git/hooks", ".git/config"].includes(rel);
    const withGit = sandboxDenyPaths(WS, exists, true, ["sub/.envrc"]);
    expect(withGit).toContain("/w/.vscode");
    expect(withGit).toContain("/w/.mcp.json/.keel-protected");
    expect(withGit).toContain("/w/.git");
    expect(withGit.some((p) => p.startsWith("/w/.git/"))).toBe(false);
    expect(withGit).toContain("/w/sub/.envrc");
    // inside another folder only when it exists (a placeholder would make `.hg` appear)
    expect(withGit.some((p) => p.startsWith("/w/.hg"))).toBe(false);
    expect(sandboxDenyPaths(WS, (rel) => rel === ".hg/hgrc", false)).toContain("/w/.hg/hgrc");
    // no repository: none may be made at the top
    const noGit = sandboxDenyPaths(WS, () => false, false);
    expect(noGit).toContain("/w/.git/.keel-protected");
    expect(noGit.filter((p) => p.startsWith("/w/.git/"))).toEqual(["/w/.git/.keel-protected"]);
    const unheld = PROTECTED_PATHS.filter((p) => p.unheld).length;
    expect(unheld).toBeGreaterThan(0);
    expect(noGit.length).toBe(COMMAND_PROTECTED.filter((p) => !p.includes("/")).length - unheld);
  });

  it("for a git write a person approved: .git's protected parts, not .git; none in a missing one", () => {
    const exists = (rel: string) => [".git", ".git/hooks", ".git/config"].includes(rel);
    const approved = sandboxDenyPaths(WS, exists, true, [], true);
    expect(approved).not.toContain("/w/.git");
    expect(approved).toContain("/w/.git/hooks");
    expect(approved).toContain("/w/.git/config");
    expect(approved).toContain("/w/.git/info/attributes/.keel-protected");
    const noGit = sandboxDenyPaths(WS, () => false, false, [], true);
    expect(noGit.some((p) => p === "/w/.git" || p.startsWith("/w/.git/"))).toBe(false);
  });
});

describe("removedWhenMade", () => {
  it("answers as isCommandProtected does for every name, the quick no included", () => {
    const names = [
      ...PROTECTED_PATHS.map((p) => p.path),
      "src/app.ts",
      "a/.VSCode",
      "b/VSCODE~1",
      "c/.envrc.",
      "d/.E\u200bnvrc",
      "e/notes.txt",
      "f/.cargo/config.toml",
      "g/config.toml",
      "h/ſettings",
      "pylintrc",
      "crush.json",
      "mise.toml",
    ];
    for (const rel of names) {
      const slow =
        (rel.includes("/") ||
          PROTECTED_PATHS.some((p) => p.unheld && isCommandProtected(p.path) && p.path === rel)) &&
        isCommandProtected(rel);
      expect(removedWhenMade(rel), rel).toBe(slow);
    }
  });
});

describe("unheld entries", () => {
  it("no placeholder holds a missing one; aftercare removes one a command made, at the top level too", () => {
    const denied = sandboxDenyPaths("/w", () => false, false);
    expect(denied).not.toContain("/w/opencode.json/.keel-protected");
    expect(denied).toContain("/w/.vscode/.keel-protected");
    expect(sandboxDenyPaths("/w", (rel) => rel === "pylintrc", false)).toContain("/w/pylintrc");
    for (const rel of ["opencode.json", "crush.json", "Pylintrc", "sub/.vscode"])
      expect(removedWhenMade(rel), rel).toBe(true);
    for (const rel of [".vscode", "app.py", "sub/app.py"])
      expect(removedWhenMade(rel), rel).toBe(false);
  });
});

describe("names from the seventh attack review", () => {
  it("Mercurial's share-safe config and mise's other config files are protected", () => {
    for (const rel of [
      ".hg/hgrc-not-shared",
      "sub/.hg/hgrc-not-shared",
      ".config/mise.toml",
      ".config/mise.local.toml",
      "mise/config.local.toml",
    ])
      expect(protectedEntry(rel), rel).toBeDefined();
    expect(isCommandProtected(".hg/hgrc-not-shared")).toBe(true);
  });
});

describe("git hooks' commands from a project's own files (lint-staged, husky 4, pre-commit)", () => {
  it("their config files are protected, the unprefixed ones unheld", () => {
    for (const rel of [
      ".lintstagedrc",
      "web/.lintstagedrc.yml",
      ".huskyrc.json",
      "a/husky.config.js",
    ])
      expect(protectedEntry(rel), rel).toBeDefined();
    expect(protectedEntry("lint-staged.config.mjs")?.unheld).toBe(true);
    expect(isCommandProtected("pkg/.lintstagedrc.cjs")).toBe(true);
  });
});

describe("names protected by their form (PROTECTED_FORMS)", () => {
  it("a VS Code workspace file and mise's per-environment configs, at any depth, in any case", () => {
    for (const rel of [
      "app.code-workspace",
      "sub/App.Code-Workspace",
      "mise.dev.toml",
      ".mise.ci.local.toml",
      ".config/mise.prod.toml",
    ]) {
      expect(protectedEntry(rel), rel).toBeDefined();
      expect(isCommandProtected(rel), rel).toBe(true);
      expect(removedWhenMade(rel), rel).toBe(true);
    }
    expect(protectedEntry("app.code-workspace")?.why).toMatch(/VS Code/);
  });
  it("mise's folder of config: conf.d, config.<env>.toml, and rtx's old names", () => {
    for (const rel of [
      "mise/config.production.toml",
      "sub/mise/config.ci.local.toml",
      "Mise/Config.Prod.toml",
      "mise/conf.d/tools.toml",
      "pkg/mise/conf.d/env.toml",
      ".rtx.toml",
      ".rtx.local.toml",
    ])
      expect(protectedEntry(rel), rel).toBeDefined();
    // what a command may not leave: the folder conf.d, each config.<env>.toml (removed when made)
    for (const rel of [
      "mise/conf.d",
      "sub/mise/conf.d",
      ".rtx.toml",
      "mise/config.production.toml",
    ])
      expect(isCommandProtected(rel), rel).toBe(true);
    for (const rel of [
      "mise/config.production.toml",
      "sub/mise/config.ci.local.toml",
      "mise/conf.d",
    ])
      expect(removedWhenMade(rel), rel).toBe(true);
    // the same names elsewhere are the project's
    for (const rel of [
      "config.production.toml",
      "src/config.dev.toml",
      "mise/other.toml",
      "conf.d/a.toml",
    ]) {
      expect(protectedEntry(rel), rel).toBeUndefined();
      expect(isCommandProtected(rel), rel).toBe(false);
      expect(removedWhenMade(rel), rel).toBe(false);
    }
  });
  it("names that only look alike are the project's", () => {
    for (const rel of ["code-workspace.md", "docs/mise.md", "mise.toml.bak", "src/mise-dev.toml"]) {
      expect(protectedEntry(rel), rel).toBeUndefined();
      expect(removedWhenMade(rel), rel).toBe(false);
    }
  });
});

describe("lazygit's repository config", () => {
  it("the gate asks a person for .lazygit.yml at any depth and .git/lazygit.yml", () => {
    const w = freshWorkspace("keel-gap-lazygit-");
    for (const rel of [".lazygit.yml", "sub/.lazygit.yml", ".git/lazygit.yml"])
      expect(gateDecision(w, rel), rel).toMatch(/is protected: lazygit loads it/);
    expect(gateDecision(w, "docs/lazygit.md")).toBe("run");
  });
});

describe(".env, which aider and direnv's dotenv load", () => {
  it("the gate asks a person for one at any depth; other env files are the project's", () => {
    const w = freshWorkspace("keel-gap-env-");
    for (const rel of [".env", "app/.env", ".ENV"])
      expect(gateDecision(w, rel, "AIDER_LINT_CMD=id\n"), rel).toMatch(/is protected: aider/);
    for (const rel of [".env.example", "config.env", "src/env.ts"])
      expect(gateDecision(w, rel), rel).toBe("run");
  });
  it("one there is held read-only, a missing one is not held (tools would meet a folder), one a command makes goes", () => {
    expect(sandboxDenyPaths("/w", (rel) => rel === ".env", false)).toContain("/w/.env");
    expect(sandboxDenyPaths("/w", () => false, false).some((p) => p.startsWith("/w/.env/"))).toBe(
      false,
    );
    const w = freshWorkspace("keel-gap-env-made-");
    const before = markWorkspace(w);
    mkdirSync(path.join(w, "app"));
    for (const rel of [".env", "app/.env", ".env.example"])
      writeFileSync(path.join(w, rel), "GIT_CONFIG_COUNT=1\n");
    expect(cleanAfter(w, before).sort()).toEqual([".env", "app/.env"]);
    expect(existsSync(path.join(w, ".env.example"))).toBe(true);
  });
});

describe("the files an .envrc sources (.envrc.local, .envrc.private, .envrc.*)", () => {
  it("the gate asks a person at any depth; aftercare removes one a command makes", () => {
    const w = freshWorkspace("keel-gap-envrc-");
    for (const rel of [".envrc.local", "app/.envrc.private", ".Envrc.ci"])
      expect(gateDecision(w, rel), rel).toMatch(/is protected: an \.envrc sources it/);
    for (const rel of ["envrc.local", "docs/.envrc-notes.md"])
      expect(gateDecision(w, rel), rel).toBe("run");
    const before = markWorkspace(w);
    mkdirSync(path.join(w, "app"));
    for (const rel of [".envrc.local", "app/.envrc.private"])
      writeFileSync(path.join(w, rel), "touch ../pwned\n");
    expect(cleanAfter(w, before).sort()).toEqual([".envrc.local", "app/.envrc.private"]);
  });
});

describe("commitlint, trunk, RuboCop and git's XDG config", () => {
  it("the gate asks a person for their files and for RuboCop's require and plugins", () => {
    const w = freshWorkspace("keel-gap-misc-");
    for (const [rel, why] of [
      ["commitlint.config.js", /commitlint loads it/],
      ["web/commitlint.config.ts", /commitlint loads it/],
      [".commitlintrc", /commitlint loads it/],
      [".commitlintrc.yml", /commitlint loads it/],
      [".trunk/trunk.yaml", /trunk runs its actions/],
      [".config/git/config", /git config and attributes/],
      [".config/git/attributes", /git config and attributes/],
    ] as const)
      expect(gateDecision(w, rel), rel).toMatch(why);
    writeFileSync(path.join(w, ".rubocop.yml"), "AllCops:\n  NewCops: enable\n");
    for (const extra of ["require:\n  - ./lib/cop.rb\n", "plugins:\n  - rubocop-evil\n"])
      expect(
        gateDecision(w, ".rubocop.yml", `AllCops:\n  NewCops: enable\n${extra}`),
        extra,
      ).toMatch(/is protected: RuboCop loads/);
    expect(gateDecision(w, ".rubocop.yml", "Layout/LineLength:\n  Max: 100\n")).toBe("run");
    for (const rel of ["commitlint.md", ".trunk/out/x.json", ".config/app.json"])
      expect(gateDecision(w, rel), rel).toBe("run");
  });
});
