/** Globs matched segment by segment with RE2, never by a backtracking RegExp (issue 45). */
import { describe, expect, it } from "vitest";
import {
  compileGlob,
  expandBraces,
  MAX_BRACE_ALTERNATIVES,
} from "../../../src/tools/glob-match.js";

describe("glob, matched without backtracking", () => {
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
