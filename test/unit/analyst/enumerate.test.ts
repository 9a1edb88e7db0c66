/**
 * What the analyst counts of a project: lines as wc -l counts them, nothing of keel's own, no link
 * followed; and what a listing trusts of a file's size and times on a re-run.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import { describe, expect, it, beforeAll } from "vitest";
import {
  enumerateUnits,
  lineCount,
  RACY_MS,
  unchanged,
  type StatIndex,
} from "../../../src/analyst/enumerate.js";
import { tempWorkspace } from "../../support/harness.js";
import { linkedWorkspace } from "../../support/links.js";

describe("enumerateUnits", () => {
  it("counts lines as wc -l does, the last one without its newline too", () => {
    expect(["", "a", "a\n", "a\nb", "a\nb\n", "\n", "\n\n"].map(lineCount)).toEqual([
      0, 1, 1, 2, 2, 1, 2,
    ]);
  });

  it("reports a file's lines so, and neither lists nor counts keel's own folder as skipped", async () => {
    const dir = tempWorkspace("keel-enum-");
    writeFileSync(path.join(dir, "README.md"), "# proj\n");
    mkdirSync(path.join(dir, ".keel"));
    writeFileSync(path.join(dir, ".keel/report.md"), "# report\n");
    mkdirSync(path.join(dir, "node_modules"));
    const e = await enumerateUnits(dir);
    expect(e.files.map((f) => [f.path, f.lines])).toEqual([["README.md", 1]]);
    expect(e.skipped.vendored).toBe(1);
  });
});

const sha = (s: string) => createHash("sha1").update(s).digest("hex");
const H = sha("x");

describe("a listing's index of size and times", () => {
  const st = { size: 10, mtimeMs: 1000, ctimeMs: 1000, ino: 7 };
  const index: StatIndex = { stamp: 10_000, files: { "a.ts": { ...st, hash: H, lines: 1 } } };

  it("trusts a file whose size, times and inode are the same; reads any other again", () => {
    expect(unchanged(index, "a.ts", st)).toEqual(index.files["a.ts"]);
    expect(unchanged(index, "b.ts", st)).toBeUndefined();
    expect(unchanged(undefined, "a.ts", st)).toBeUndefined();
    for (const other of [
      { ...st, size: 11 },
      { ...st, mtimeMs: 1001 },
      { ...st, ctimeMs: 1001 },
      { ...st, ino: 8 },
    ])
      expect(unchanged(index, "a.ts", other)).toBeUndefined();
  });

  it("does not trust a file changed within RACY_MS of the listing that saw it (git's racily clean)", () => {
    const late = { ...st, mtimeMs: 10_000 - RACY_MS, ctimeMs: 10_000 - RACY_MS };
    const racy: StatIndex = { stamp: 10_000, files: { "a.ts": { ...late, hash: H, lines: 1 } } };
    expect(unchanged(racy, "a.ts", late)).toBeUndefined();
    const settled = { ...late, mtimeMs: late.mtimeMs - 1, ctimeMs: late.ctimeMs - 1 };
    const old: StatIndex = { stamp: 10_000, files: { "a.ts": { ...settled, hash: H, lines: 1 } } };
    expect(unchanged(old, "a.ts", settled)).toBeDefined();
  });
});

let ws: string;
beforeAll(() => {
  ws = linkedWorkspace().ws;
});

describe("walks never follow a link out", () => {
  it("the analyst's enumeration skips every link", async () => {
    const e = await enumerateUnits(ws);
    expect(e.files.map((f) => f.path)).toEqual(["src/a.ts"]);
  });
});
