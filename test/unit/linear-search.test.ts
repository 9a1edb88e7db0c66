/**
 * grep and glob in linear time (issue 45): globs are matched segment by segment with RE2, never by
 * a backtracking RegExp, and list what the walk listed before (tinyglobby, kept as the oracle for
 * ordinary patterns); grep's patterns run on RE2, and what RE2 cannot run in linear time is
 * refused with the reason the model reads.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { glob as tinyglob } from "tinyglobby";
import { beforeAll, describe, expect, it } from "vitest";
import { compileGlob, expandBraces, MAX_BRACE_ALTERNATIVES } from "../../src/tools/glob-match.js";
import { grepSource } from "../../src/tools/grep-pattern.js";
import { files } from "../../src/tools/search-tools.js";
import { globTool, grepTool } from "../../src/tools/search-tools.js";
import type { ToolContext } from "../../src/tools/types.js";
import { tempWorkspace } from "../support/harness.js";

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

  it("`*a*a*…b` against a 200-character name is answered, and right", () => {
    const m = compileGlob(`${"*a".repeat(20)}*b`);
    if ("refused" in m) throw new Error(m.refused);
    expect(m.matches(`${"a".repeat(199)}.txt`)).toBe(false);
    expect(m.matches(`${"a".repeat(199)}b`)).toBe(true);
    expect(m.matches(`x/${"a".repeat(199)}b`)).toBe(false);
  });

  it("a wildcard never matches a leading dot; a written dot does", () => {
    const m = compileGlob("**/*.ts");
    const d = compileGlob("**/.*");
    if ("refused" in m || "refused" in d) throw new Error("refused");
    expect(m.matches("src/.x.ts")).toBe(false);
    expect(m.matches(".src/x.ts")).toBe(false);
    expect(m.matches("src/x.ts")).toBe(true);
    expect(d.matches("src/.x.ts")).toBe(true);
  });

  it("refuses what it cannot match, with the reason", () => {
    expect(compileGlob("+(a|b).ts")).toEqual({
      refused: expect.stringContaining("extended globs"),
    });
    expect(compileGlob("!(x).ts")).toEqual({ refused: expect.stringContaining("extended globs") });
    expect(compileGlob("!*.ts")).toEqual({ refused: expect.stringContaining("negated") });
    const braces = "{a,b}".repeat(9); // 512 alternatives
    expect(expandBraces(braces)).toEqual(
      expect.stringContaining(`more than ${MAX_BRACE_ALTERNATIVES}`),
    );
  });
});

const ctx = (): ToolContext => ({ workspace: root, commandTimeoutMs: 5000, outputLimit: 50_000 });

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

  it("runs what is linear: classes, lookbehind, \\k as a letter where no group is named", () => {
    expect(grepSource("(?<=con)tent\\s+of")).toHaveProperty("source");
    expect(grepSource("\\k")).toHaveProperty("source");
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
