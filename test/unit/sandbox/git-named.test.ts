/**
 * The workspace paths the person's own git config names (sandbox/git-named.ts): included files,
 * the hooks folder, scripts a key runs. A file the agent wrote there would run in the person's
 * next git command, so they are protected like the fixed list's.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import {
  configDirOf,
  gitNamedPaths,
  namedByGitConfig,
  parseConfigList,
  personalNames,
  programPaths,
  type ConfigEntry,
} from "../../../src/sandbox/git-named.js";
import { protectedEntry } from "../../../src/sandbox/protected.js";
import { decideCall } from "../../../src/tools/permissions.js";
import { tempWorkspace } from "../../support/harness.js";

const at = { workspace: "/w", top: "/w", home: "/home/ann" };
const entry = (key: string, value: string, file = "/w/.git/config"): ConfigEntry => ({
  file,
  key,
  value,
});
const paths = (entries: ConfigEntry[], where = at) =>
  namedByGitConfig(entries, where).map((p) => p.path);

describe("namedByGitConfig", () => {
  it("names included files from the folder of the file that includes them", () => {
    expect(
      paths([
        entry("include.path", "../team.gitconfig"),
        entry("includeIf.onbranch:feat.path", "conf/feat.gitconfig"),
        entry("include.path", "nested.cfg", "/w/config/git/base.cfg"),
        entry("include.path", "~/.gitconfig.local", "/home/ann/.gitconfig"),
      ]),
    ).toEqual(["team.gitconfig", ".git/conf/feat.gitconfig", "config/git/nested.cfg"]);
  });

  it("names the hooks folder, the template folder and the attributes file from the top", () => {
    expect(
      paths([
        entry("core.hooksPath", ".githooks"),
        entry("init.templateDir", "tools/git-template"),
        entry("core.attributesFile", "./meta/attributes"),
      ]),
    ).toEqual([".githooks", "tools/git-template", "meta/attributes"]);
  });

  it("names each path a program key runs, not bare command names, options or git's own words", () => {
    expect(
      paths([
        entry("alias.lint", "!./scripts/lint.sh --fix"),
        entry("alias.fmt", "!sh tools/fmt.sh && echo done"),
        entry("alias.st", "status -sb"),
        entry("alias.lg", "!git log --oneline"),
        entry("core.fsmonitor", "bin/fsmon"),
        entry("core.fsmonitor", "true"),
        entry("filter.crypt.clean", "'scripts/crypt filter' clean %f"),
        entry("credential.https://example.com.helper", "!/w/ci/cred.sh"),
        entry("core.pager", "less -R"),
        // by the last word of the key: a newer git's or a tool's program
        entry("tar.tgz.command", "./tools/gz -n"),
        entry("lfs.customtransfer.x.path", "bin/transfer"),
        // not a program key: a word with a slash is not run
        entry("commit.template", "docs/message.txt"),
        entry("submodule.lib.path", "vendor/lib"),
      ]),
    ).toEqual([
      "scripts/lint.sh",
      "tools/fmt.sh",
      "bin/fsmon",
      "scripts/crypt filter",
      "ci/cred.sh",
      "tools/gz",
      "bin/transfer",
    ]);
  });

  it("reads a program value as the shell would run it: cd, interpreters, expansions, globs, sh -c", () => {
    const words = (value: string, alias = true) => programPaths(value, alias);
    expect(words("!cd tools && ./deploy.sh")).toEqual(["./deploy.sh", "tools/deploy.sh"]);
    expect(words("!node release.js")).toEqual(["release.js"]);
    expect(words('!"$(git rev-parse --show-toplevel)"/bin/check.sh')).toEqual(["bin/check.sh"]);
    expect(words("!`git rev-parse --show-toplevel`/bin/x")).toEqual(["bin/x"]);
    expect(words("!$GIT_DIR/../tools/y --flag=a/b.cfg --dir=web/app")).toEqual([
      "tools/y",
      "a/b.cfg",
    ]);
    expect(words("!./scripts/*.sh")).toEqual(["./scripts/"]); // a folder: all under it
    expect(words("!sh -c 'cd tools && ./run.sh'")).toEqual(["./run.sh", "tools/run.sh"]);
    expect(words('!f() { ./a.sh "$@"; }; f')).toEqual(["./a.sh"]);
    // an option's argument, a module, a redirection
    expect(words("ssh -F sshconf", false)).toEqual(["sshconf"]);
    expect(words("!python3 -m tools.fmt")).toEqual([
      "tools.fmt",
      "tools/fmt.py",
      "tools/fmt/__main__.py",
    ]);
    expect(words("!sh < deploy")).toEqual(["deploy"]);
    // a git alias without `!` runs git: its folder options only (its `-c` pairs: below)
    expect(words("--exec-path=tools frob", true)).toEqual(["tools"]);
    expect(words("log --graph docs/x.md", true)).toEqual([]);
    // the project's folders are not named (they would be held read-only for every command)
    expect(words("!make -C src && npm --prefix web run dev --dir=build")).toEqual([]);
  });

  it("reads a git alias's own -c pairs as config", () => {
    expect(
      paths([
        entry("alias.ci", "-c core.hooksPath=.ci-hooks commit"),
        entry("alias.m", "-c core.fsmonitor=tools/mon status"),
        entry("alias.x", "-c alias.y=!./z.sh y"),
        entry("alias.c", "!git -c core.hooksPath=.shell-hooks commit"),
        entry("svn.authorsProg", "./authors.sh"),
      ]),
    ).toEqual([".ci-hooks", "tools/mon", "z.sh", ".shell-hooks", "authors.sh"]);
  });

  it("names nothing outside the workspace, nor the workspace itself", () => {
    expect(
      paths([
        entry("include.path", "/etc/gitconfig.d/x"),
        entry("core.hooksPath", "../shared-hooks"),
        entry("alias.x", "!./"),
        entry("core.hooksPath", "."),
      ]),
    ).toEqual([]);
  });

  it("resolves from the worktree's top when the workspace is a folder inside it", () => {
    const sub = { workspace: "/w/pkg", top: "/w", home: "/home/ann" };
    expect(
      paths(
        [
          entry("core.hooksPath", "pkg/hooks"),
          entry("alias.t", "!./pkg/t.sh"),
          entry("core.hooksPath", ".githooks"),
        ],
        sub,
      ),
    ).toEqual(["hooks", "t.sh"]);
  });
});

describe("parseConfigList", () => {
  it("reads git's -z listing: origin, then key and value split at the first newline", () => {
    const out =
      "file:.git/config\0core.bare\nfalse\0file:/home/ann/.gitconfig\0alias.x\n!a\nb\0command line:\0x.y\nz\0file:.git/config\0flag.only\0";
    expect(parseConfigList(out, "/w")).toEqual([
      { file: "/w/.git/config", key: "core.bare", value: "false" },
      { file: "/home/ann/.gitconfig", key: "alias.x", value: "!a\nb" },
      { file: "/w/(environment)", key: "x.y", value: "z" },
      { file: "/w/.git/config", key: "flag.only", value: "" },
    ]);
  });
});

describe("gitNamedPaths, asked of the real git", () => {
  it("follows the repository's includes and names what they name too, from a subfolder as well", () => {
    const ws = path.join(tempWorkspace("keel-named-"), "ws");
    mkdirSync(path.join(ws, "pkg"), { recursive: true });
    execFileSync("git", ["init", "-q", ws]);
    const config = (...args: string[]) => execFileSync("git", ["-C", ws, "config", ...args]);
    config("--add", "include.path", "../team.gitconfig");
    config("core.hooksPath", ".githooks");
    writeFileSync(path.join(ws, "team.gitconfig"), "[alias]\n\tlint = !./scripts/lint.sh\n");
    const named = gitNamedPaths(ws);
    expect(named.map((p) => p.path).sort()).toEqual([
      ".githooks",
      "scripts/lint.sh",
      "team.gitconfig",
    ]);
    expect(named.find((p) => p.path === "scripts/lint.sh")?.why).toMatch(/runs it \(alias\.lint\)/);
    expect(gitNamedPaths(path.join(ws, "pkg"))).toEqual([]);
    config("--add", "include.path", "../pkg/local.cfg");
    expect(gitNamedPaths(path.join(ws, "pkg")).map((p) => p.path)).toEqual(["local.cfg"]);
  });

  it("names nothing in a folder that is no repository and whose user config names nothing there", () => {
    const ws = tempWorkspace("keel-named-none-");
    expect(gitNamedPaths(ws).filter((p) => !p.path.startsWith(".."))).toEqual([]);
  });
});

describe("gitNamedPaths reads wide", () => {
  const repo = (dir: string) => {
    mkdirSync(dir, { recursive: true });
    execFileSync("git", ["init", "-q", dir]);
    return (...args: string[]) => execFileSync("git", ["-C", dir, "config", ...args]);
  };

  it("reads an include whatever its condition: another branch puts it in force later", () => {
    const root = tempWorkspace("keel-named-if-");
    const ws = path.join(root, "ws");
    repo(ws)("includeIf.onbranch:release/**.path", path.join(root, "release.gitconfig"));
    writeFileSync(path.join(root, "release.gitconfig"), "[core]\n\thooksPath = .release-hooks\n");
    expect(gitNamedPaths(ws).map((p) => p.path)).toEqual([".release-hooks"]);
  });

  it("asks each repository for its own config: a clone inside, a folder of clones under a global hooksPath", () => {
    const root = tempWorkspace("keel-named-nested-");
    const ws = path.join(root, "ws");
    repo(path.join(ws, "vendor/lib"))("core.hooksPath", ".githooks");
    repo(path.join(ws, "projA"));
    expect(configDirOf(ws, "vendor/lib/.githooks/pre-commit")).toBe(path.join(ws, "vendor/lib"));
    expect(configDirOf(ws, "notes.txt")).toBe(ws);
    expect(gitNamedPaths(ws, path.join(ws, "vendor/lib")).map((p) => p.path)).toEqual([
      "vendor/lib/.githooks",
    ]);
    const global = path.join(root, "global.gitconfig");
    writeFileSync(
      global,
      "[core]\n\thooksPath = .githooks\n[alias]\n\tlint = !./scripts/lint.sh\n",
    );
    vi.stubEnv("GIT_CONFIG_GLOBAL", global);
    try {
      expect(gitNamedPaths(ws, path.join(ws, "projA")).map((p) => p.path)).toEqual([
        "projA/.githooks",
        "projA/scripts/lint.sh",
      ]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("names a path through a link as written and where the link leads", () => {
    const root = tempWorkspace("keel-named-real-");
    const ws = path.join(root, "ws");
    mkdirSync(path.join(ws, "lib"), { recursive: true });
    symlinkSync("lib", path.join(ws, "tools"));
    repo(ws)("alias.fmt", "!sh tools/fmt.sh");
    expect(gitNamedPaths(ws).map((p) => p.path)).toEqual(["tools/fmt.sh", "lib/fmt.sh"]);
  });
});

describe("personalNames", () => {
  it("gives the person's own relative names at any depth, and not what lies outside", () => {
    const home = "/home/ann/.gitconfig";
    const names = personalNames([
      entry("core.hooksPath", ".githooks", home),
      entry("alias.lint", "!./scripts/lint.sh", home),
      entry("include.path", "more.gitconfig", home),
      entry("core.editor", "/usr/bin/vim", home),
    ]);
    expect(names.map((n) => [n.path, n.deep])).toEqual([
      [".githooks", true],
      ["scripts/lint.sh", true],
    ]);
    expect(protectedEntry("app/.githooks/pre-commit", names)?.why).toMatch(/hooks/);
    expect(protectedEntry("a/b/scripts/lint.sh", names)).toBeDefined();
    expect(protectedEntry("docs/githooks.md", names)).toBeUndefined();
  });
});

describe("a named path at the gate", () => {
  const named = [{ path: ".githooks", why: "git runs the hooks in it (core.hooksPath)" }];
  it("protects what is under a named script too; a folder an argument names is the project's", () => {
    const named = namedByGitConfig(
      [entry("alias.rel", "!node release.js"), entry("alias.dev", "!npm --prefix web/app run dev")],
      at,
    );
    expect(named.map((n) => n.path)).toEqual(["release.js"]);
    expect(protectedEntry("release.js/index.js", named)).toBeDefined(); // node runs it
    expect(protectedEntry("web/app/index.js", named)).toBeUndefined();
    expect(programPaths("!node tools/gen && sh ./x", true)).toEqual(["tools/gen", "./x"]);
  });

  it("is protected from the top, with its folding names, and only from the top", () => {
    expect(protectedEntry(".githooks/pre-commit", named)?.why).toMatch(/core\.hooksPath/);
    expect(protectedEntry(".GitHooks/pre-commit", named)).toBeDefined();
    expect(protectedEntry("pkg/.githooks/pre-commit", named)).toBeUndefined();
    expect(protectedEntry("githooks.md", named)).toBeUndefined();
  });

  it("asks a person for a file change there, whatever --yes says", () => {
    const d = decideCall(
      { tool: "write_file", toolClass: "mutate", path: ".githooks/pre-commit" },
      { mode: "auto", rules: { allow: [], deny: [], ask: [] }, autoApprove: true, named },
    );
    expect(d).toMatchObject({ decision: "ask", protected: true });
    expect(d.decision === "ask" && d.reason).toMatch(
      /\.githooks\/pre-commit is protected: git runs the hooks/,
    );
  });
});
