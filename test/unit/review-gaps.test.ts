/**
 * Gaps a security review found in what keel protects: files other tools read as config and run
 * from (lazygit, aider and direnv's `.env`, direnv's other `.envrc`s, asdf, pnpm, commitlint,
 * trunk, RuboCop, git's XDG config), and git state (another tool's file in a git folder, an
 * unfinished rebase). The gate's decision for each path, and aftercare's clean-up.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cleanAfter } from "../../src/sandbox/aftercare.js";
import { markWorkspace, nestedDenies } from "../../src/sandbox/look.js";
import { sandboxDenyPaths } from "../../src/sandbox/protected.js";
import { protectedSetting } from "../../src/sandbox/protected-settings.js";
import { gateDecision } from "../support/gate.js";
import { git } from "../support/git.js";
import { tempWorkspace } from "../support/harness.js";

const fresh = (prefix: string) => {
  const w = path.join(tempWorkspace(prefix), "ws");
  mkdirSync(w);
  return w;
};

describe("lazygit's repository config", () => {
  it("the gate asks a person for .lazygit.yml at any depth and .git/lazygit.yml", () => {
    const w = fresh("keel-gap-lazygit-");
    for (const rel of [".lazygit.yml", "sub/.lazygit.yml", ".git/lazygit.yml"])
      expect(gateDecision(w, rel), rel).toMatch(/is protected: lazygit loads it/);
    expect(gateDecision(w, "docs/lazygit.md")).toBe("run");
  });
  it("the sandbox holds a repository's whole; for a git write a person approved, its lazygit.yml", () => {
    const w = fresh("keel-gap-gitdir-");
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

describe("an unfinished rebase or cherry-pick", () => {
  it("one the person had stays", () => {
    const w = fresh("keel-gap-rebase-own-");
    git(w, "init", "-q");
    for (const m of ["one", "two"]) git(w, "commit", "-q", "--allow-empty", "-m", m);
    git(w, "-c", "sequence.editor=sed -i '1a break'", "rebase", "-q", "-i", "HEAD~1");
    const before = markWorkspace(w);
    expect(cleanAfter(w, before)).toEqual([]);
    expect(existsSync(path.join(w, ".git/rebase-merge"))).toBe(true);
  });
});

describe(".env, which aider and direnv's dotenv load", () => {
  it("the gate asks a person for one at any depth; other env files are the project's", () => {
    const w = fresh("keel-gap-env-");
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
    const w = fresh("keel-gap-env-made-");
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
    const w = fresh("keel-gap-envrc-");
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

describe(".tool-versions: asdf's path: and ref: versions", () => {
  const versions = "nodejs 20.11.0\npython 3.12.1 3.11.7\n";
  it("the gate asks a person for a line that adds or changes one; versions are the project's", () => {
    const w = fresh("keel-gap-asdf-");
    writeFileSync(path.join(w, ".tool-versions"), versions);
    expect(gateDecision(w, ".tool-versions", "nodejs path:./bin/fake-node\n")).toMatch(
      /is protected: asdf's shims run/,
    );
    expect(gateDecision(w, "app/.tool-versions", "ruby ref:v3.3.0\n")).toMatch(/asdf/);
    expect(gateDecision(w, ".tool-versions", "nodejs 22.1.0 # lts\npython 3.12.1\n")).toBe("run");
    // read as asdf reads it: a second version on the line, a tool written twice
    expect(protectedSetting(".tool-versions", versions, "python 3.12.1 path:/x\n")).toBeDefined();
    expect(
      protectedSetting(".tool-versions", versions, `${versions}nodejs path:../n\n`),
    ).toBeDefined();
  });
  it("aftercare puts back the file a command gave one", () => {
    const w = fresh("keel-gap-asdf-cmd-");
    writeFileSync(path.join(w, ".tool-versions"), versions);
    const before = markWorkspace(w);
    writeFileSync(path.join(w, ".tool-versions"), "nodejs path:./bin/fake-node\n");
    expect(cleanAfter(w, before)[0]).toMatch(/^\.tool-versions \(changed by the command: asdf/);
    expect(readFileSync(path.join(w, ".tool-versions"), "utf8")).toBe(versions);
  });
});

describe("pnpm-workspace.yaml's settings that run code", () => {
  const ws = "packages:\n  - 'packages/*'\n";
  it("the gate asks a person for one added or changed; the workspace's packages are the project's", () => {
    const w = fresh("keel-gap-pnpm-");
    writeFileSync(path.join(w, "pnpm-workspace.yaml"), ws);
    for (const extra of [
      "nodeOptions: --require ./x.cjs\n",
      "scriptShell: ./sh.js\n",
      "dangerouslyAllowAllBuilds: true\n",
      "onlyBuiltDependencies:\n  - evil-pkg\n",
      "allowBuilds:\n  evil-pkg: true\n",
      "neverBuiltDependencies: []\n",
    ])
      expect(gateDecision(w, "pnpm-workspace.yaml", ws + extra), extra).toMatch(
        /is protected: pnpm runs node/,
      );
    expect(gateDecision(w, "pnpm-workspace.yaml", `${ws}  - 'apps/*'\ncatalog:\n  a: 1\n`)).toBe(
      "run",
    );
  });
  it("aftercare puts back the file a command gave one", () => {
    const w = fresh("keel-gap-pnpm-cmd-");
    writeFileSync(path.join(w, "pnpm-workspace.yaml"), ws);
    const before = markWorkspace(w);
    writeFileSync(path.join(w, "pnpm-workspace.yaml"), `${ws}onlyBuiltDependencies: [x]\n`);
    expect(cleanAfter(w, before)[0]).toMatch(/^pnpm-workspace\.yaml \(changed by the command/);
    expect(readFileSync(path.join(w, "pnpm-workspace.yaml"), "utf8")).toBe(ws);
  });
});

describe("commitlint, trunk, RuboCop and git's XDG config", () => {
  it("the gate asks a person for their files and for RuboCop's require and plugins", () => {
    const w = fresh("keel-gap-misc-");
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
  it("aftercare removes what a command makes of them, and puts back a .rubocop.yml it gave a require", () => {
    const w = fresh("keel-gap-misc-cmd-");
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
