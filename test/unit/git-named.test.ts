/**
 * The workspace paths the person's own git config names (sandbox/git-named.ts): included files,
 * the hooks folder, scripts a key runs. A file the agent wrote there would run in the person's
 * next git command, so they are protected like the fixed list's.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  gitNamedPaths,
  namedByGitConfig,
  parseConfigList,
  type ConfigEntry,
} from "../../src/sandbox/git-named.js";
import { protectedEntry } from "../../src/sandbox/protected.js";
import { decideCall } from "../../src/tools/permissions.js";
import { tempWorkspace } from "../support/harness.js";

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

  it("names each path a program key runs, not bare names, options or variables", () => {
    expect(
      paths([
        entry("alias.lint", "!./scripts/lint.sh --fix"),
        entry("alias.fmt", "!sh tools/fmt.sh && echo done"),
        entry("alias.st", "status -sb"),
        entry("core.fsmonitor", "bin/fsmon"),
        entry("core.fsmonitor", "true"),
        entry("filter.crypt.clean", "'scripts/crypt filter' clean %f"),
        entry("diff.img.textconv", "$GIT_DIR/../x/y --flag=a/b"),
        entry("credential.https://example.com.helper", "!/w/ci/cred.sh"),
        entry("core.pager", "less -R"),
        // not a program key: a word with a slash is not run
        entry("commit.template", "docs/message.txt"),
      ]),
    ).toEqual([
      "scripts/lint.sh",
      "tools/fmt.sh",
      "bin/fsmon",
      "scripts/crypt filter",
      "ci/cred.sh",
    ]);
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

describe("a named path at the gate", () => {
  const named = [{ path: ".githooks", why: "git runs the hooks in it (core.hooksPath)" }];
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
