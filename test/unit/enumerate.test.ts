/** What the analyst counts of a project: lines as wc -l counts them, and nothing of keel's own. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { enumerateUnits, lineCount } from "../../src/analyst/enumerate.js";
import { tempWorkspace } from "../support/harness.js";

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
