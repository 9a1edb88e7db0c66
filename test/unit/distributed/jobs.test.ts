/** The distributed analyst's unit jobs: their keys, and the checks a job must pass. */
import { describe, expect, it } from "vitest";
import { checkUnitJob, unitJobKey, type UnitJob } from "../../../src/distributed/jobs.js";

const H1 = "1".repeat(40);
const H2 = "2".repeat(40);
const unit = (path: string, hash = H1) => ({ path, hash, bytes: 10, lines: 1, language: "ts" });
const job = (over: Partial<UnitJob> = {}): UnitJob => ({
  v: 2,
  run: "analyze-1",
  analysis: "a1",
  unit: unit("src/a.ts"),
  model: "m",
  depth: "deep",
  text: "x",
  ...over,
});

describe("unit jobs", () => {
  it("are keyed by codebase, path, content hash, model and depth", () => {
    const k = unitJobKey("/repo", job());
    expect(unitJobKey("/repo", job())).toBe(k);
    expect(k).toContain(`:src/a.ts:${H1}:m:deep`);
    for (const [target, other] of [
      ["/repo", job({ unit: unit("src/a.ts", H2) })],
      ["/repo", job({ unit: unit("src/b.ts") })],
      ["/repo", job({ model: "n" })],
      ["/repo", job({ depth: "quick" })],
      ["/other", job()],
    ] as const)
      expect(unitJobKey(target, other)).not.toBe(k);
  });

  it("a job of another format, without its parts or with a path out of the target is refused with a reason", () => {
    expect(checkUnitJob(job())).toEqual(job());
    expect(() => checkUnitJob({ ...job(), v: 1 })).toThrow(/format 1 .* format 2/);
    expect(() => checkUnitJob({ ...job(), text: undefined })).toThrow(/bad data \(text:/);
    expect(() => checkUnitJob(null)).toThrow(/format undefined/);
    for (const path of ["../secret.ts", "/etc/passwd", "a/../../b", "a//b", "./a", ""])
      expect(() => checkUnitJob(job({ unit: unit(path) })), path).toThrow(
        /unit\.path: not a path inside/,
      );
    expect(() => checkUnitJob(job({ unit: unit("a.ts", "h1") }))).toThrow(/unit\.hash/);
    expect(() => checkUnitJob({ ...job(), depth: "full" })).toThrow(/depth/);
    // what the job names beyond its format is dropped, not used: a worker reads no path a job names
    expect(checkUnitJob({ ...job(), target: "/home/someone" })).not.toHaveProperty("target");
  });
});
