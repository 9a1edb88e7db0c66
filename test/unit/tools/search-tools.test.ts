/**
 * grep and glob: matches with line numbers; globs list what the walk listed before (tinyglobby,
 * kept as the oracle for ordinary patterns); grep refuses, with the reason the model reads, what
 * RE2 cannot run in linear time (issue 45); and neither walks a link out of the workspace.
 */
import { writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, beforeAll } from "vitest";
import { glob as tinyglob } from "tinyglobby";
import type { ToolContext } from "../../../src/tools/types.js";
import { tempWorkspace } from "../../support/harness.js";
import { files, globTool, grepTool } from "../../../src/tools/search-tools.js";
import { run, context } from "../../support/tools.js";
import { SECRET, linkedTools, text } from "../../support/links.js";

describe("file tools", () => {
  it("grep finds matches with line numbers; glob lists files", async () => {
    const ctx = context();
    await run(
      "write_file",
      { path: "src/a.ts", content: "const a = 1;\nexport function findMe() {}\n" },
      ctx,
    );
    expect(await run("grep", { pattern: "findMe", glob: "*.ts" }, ctx)).toEqual({
      ok: true,
      output: "src/a.ts:2: export function findMe() {}",
    });
    expect(await run("glob", { pattern: "**/*.ts" }, ctx)).toEqual({
      ok: true,
      output: "src/a.ts",
    });
  });
});

const TREE = [
  "a.ts",
  "b.js",
  ".hidden.ts",
  "file with space.txt",
  "src/x.ts",
  "src/y.test.ts",
  "src/ab.ts",
  "src/.dot/z.ts",
  "src/deep/er/w.ts",
  "src/deep/er/w.md",
  ".github/workflows/ci.yml",
  "docs/readme.md",
  "docs/guide.MD",
  "lib/a.ts",
  "lib/sub/a.ts",
  "node_modules/m/i.ts",
  "dist/d.js",
  "src/dist/d.ts",
];

const PATTERNS = [
  "**/*.ts",
  "*.ts",
  "src/*.ts",
  "src/**",
  "src",
  "src/",
  "./src/*.ts",
  "**/*.{ts,js}",
  "src/**/*.ts",
  "**/deep/**/*.md",
  "?.ts",
  "[ab].*",
  "[!a].*",
  "src/*/er/*",
  ".github/**/*.yml",
  "**/.dot/*",
  "docs/*.md",
  "**/*",
  "*",
  "lib/**/a.ts",
  "**/w.*",
  "src/deep",
  "{src,lib}/**/*.ts",
  "**/*.test.ts",
  "src/??.ts",
  "**/[xy].ts",
  "x",
  "docs/readme.md",
  "file with space.txt",
  "*.{1..3}",
  "**/*.[a-z][a-z]",
  "src/**/er/**",
  "**/a.ts",
];

let root: string;
beforeAll(() => {
  root = tempWorkspace();
  for (const f of TREE) {
    mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    writeFileSync(path.join(root, f), `content of ${f}\n`);
  }
});

const ctx = (): ToolContext => ({ workspace: root, commandTimeoutMs: 5000, outputLimit: 50_000 });

describe("glob, matched without backtracking", () => {
  it.each(PATTERNS)("%s lists what the walk listed before", async (pattern) => {
    const before = await tinyglob(pattern, {
      cwd: root,
      ignore: ["**/node_modules/**", "**/.git/**", "**/.keel/**", "**/dist/**"],
      onlyFiles: true,
      dot: false,
      followSymbolicLinks: false,
    });
    expect(await files(root, pattern, root)).toEqual(before.sort());
  });
});

describe("grep, in linear time", () => {
  it.each([
    ["(a)\\1", "a backreference"],
    ["(?<w>a)\\k<w>", "a named backreference"],
    ["foo(?=bar)", "a lookahead"],
    ["foo(?!bar)", "a lookahead"],
  ])("refuses %s with the reason the model reads", async (pattern, what) => {
    const r = await grepTool.run({ pattern }, ctx());
    expect(r).toMatchObject({ ok: false, kind: "invalid_arguments" });
    expect(!r.ok && r.message).toContain(`${what}`);
    expect(!r.ok && r.message).toContain("linear time");
  });

  it("keeps JavaScript's syntax errors as they were", async () => {
    const r = await grepTool.run({ pattern: "a(" }, ctx());
    expect(!r.ok && r.message).toMatch(/^grep: pattern is not a valid regular expression: /);
  });

  it("finds what it found before, line by line, with a glob", async () => {
    const r = await grepTool.run(
      { pattern: "content of (src|lib)/\\w+\\.ts$", glob: "*.ts" },
      ctx(),
    );
    expect(r).toEqual({
      ok: true,
      output: [
        "lib/a.ts:1: content of lib/a.ts",
        "src/ab.ts:1: content of src/ab.ts",
        "src/x.ts:1: content of src/x.ts",
      ].join("\n"),
    });
  });

  it("glob's refusal reaches the model as an argument error", async () => {
    expect(await globTool.run({ pattern: "@(a|b)" }, ctx())).toMatchObject({
      ok: false,
      kind: "invalid_arguments",
    });
  });
});

const { run: runLinked } = linkedTools();

describe("walks never follow a link out", () => {
  it("grep over the workspace finds nothing outside (the secret, /etc/passwd)", async () => {
    for (const pattern of ["SECRET-BESIDE", "root:"]) {
      const r = await runLinked("grep", { pattern });
      expect(r.ok).toBe(true);
      expect(text(r)).not.toContain(SECRET);
      expect(text(r)).not.toMatch(/root:.*:0:0/);
    }
    // the workspace's own file through its own link is still found
    expect(text(await runLinked("grep", { pattern: "const a" }))).toContain("src/a.ts:1");
  });

  it("glob lists no names outside", async () => {
    const r = await runLinked("glob", { pattern: "**/*" });
    expect(text(r)).not.toMatch(/passwd|secret|hostname/);
    expect(text(r)).toContain("src/a.ts");
  });
});
