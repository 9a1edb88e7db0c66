/**
 * The pure parts of the analyst's re-runs and of reading its shared store: what a listing trusts
 * of a file's size and times, what one step takes, the folder hashes in one pass, the manifest's
 * entries checked one by one, and the standing of a unit when a coordinator starts again.
 */
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { analystSettingsFrom } from "../../src/analyst/context.js";
import { RACY_MS, unchanged, type StatIndex } from "../../src/analyst/enumerate.js";
import { checkManifest, isInsidePath, ManifestError } from "../../src/analyst/manifest.js";
import { folderIndex, merkles } from "../../src/analyst/records.js";
import { stepOf, STEP_SPAN } from "../../src/analyst/steps.js";
import { standingOf } from "../../src/distributed/dispatch-units.js";
import type { AnalysisJob } from "../../src/distributed/queue.js";
import { jobConfig } from "../../src/distributed/worker-settings.js";
import { tempWorkspace } from "../support/harness.js";

const sha = (s: string) => createHash("sha1").update(s).digest("hex");
const H = sha("x");
const file = (path: string, hash = H) => ({ path, hash, bytes: 1, lines: 1, language: "ts" });

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

describe("one step of units or folders", () => {
  const items = Array.from({ length: 1200 }, (_, i) => i);
  const reads: number[] = [];
  const read = (done: Set<number>) => (slice: number[]) => {
    reads.push(slice.length);
    return Promise.resolve(slice.map((i) => (done.has(i) ? i : undefined)));
  };

  it("takes every reused item and up to a batch of work, within STEP_SPAN, reading records in growing slices", async () => {
    reads.length = 0;
    const all = new Set(items);
    const s = await stepOf(items, 0, 2, read(all), (_, r) => r !== undefined);
    expect([s.end, s.reused.length, s.work]).toEqual([STEP_SPAN, STEP_SPAN, []]);
    expect(reads).toEqual([2, 8, 32, 128, 342]);
    reads.length = 0;
    const none = await stepOf(items, 100, 2, read(new Set()), (_, r) => r !== undefined);
    expect([none.end, none.reused, none.work]).toEqual([102, [], [100, 101]]);
    expect(reads).toEqual([2]); // the first run reads one record per item
    const some = await stepOf(items, 0, 2, read(new Set([0, 1, 3])), (_, r) => r !== undefined);
    expect([some.end, some.reused, some.work]).toEqual([5, [0, 1, 3], [2, 4]]);
  });

  it("keeps work that may not share the step for the next (folders: one depth at a time)", async () => {
    const folders = ["a/b", "c/d", "a", "."];
    const s = await stepOf(
      folders,
      0,
      4,
      () => Promise.resolve([undefined, undefined, undefined, undefined]),
      () => false,
      (work, f) => f.split("/").length === work[0]!.split("/").length,
    );
    expect([s.end, s.work]).toEqual([2, [0, 1]]);
  });
});

describe("folder hashes", () => {
  const files = [file("a/x.ts"), file("a/b/y.ts", sha("y")), file("top.ts")];
  const folders = ["a/b", "a", "."];

  it("are computed in one pass and cover everything below", () => {
    const m = merkles(files, folders);
    expect(Object.keys(m).sort()).toEqual([".", "a", "a/b"]);
    const changed = merkles([files[0]!, file("a/b/y.ts", sha("y2")), files[2]!], folders);
    expect(changed["a/b"]).not.toBe(m["a/b"]);
    expect(changed.a).not.toBe(m.a);
    expect(changed["."]).not.toBe(m["."]);
    const index = folderIndex(files, folders);
    expect(index.files.get("a")!.map((f) => f.path)).toEqual(["a/x.ts"]);
    expect(index.subfolders.get(".")).toEqual(["a"]);
  });
});

describe("a manifest read back from the store", () => {
  const manifest = (rows: unknown[]) => ({
    id: "m1",
    target: "/repo",
    files: rows,
    folders: ["a", ".", "../up"],
    merkles: {},
    skipped: {},
    model: null,
  });

  it("keeps the entries keel wrote and names the others: out of the target, malformed", () => {
    const m = checkManifest(
      manifest([file("a/x.ts"), file("../secret.ts"), { path: 42 }, null, file("a/y.ts", "no")]),
      "t",
    );
    expect(m.files.map((f) => f.path)).toEqual(["a/x.ts"]);
    expect(m.folders).toEqual(["a", "."]);
    expect(m.refused).toEqual([
      '"../secret.ts": not a path inside the analysed folder',
      "entry 2: no path",
      "entry 3: not an entry",
      '"a/y.ts": not a sha1',
      'folder "../up": not a folder inside the analysed folder',
    ]);
  });

  it("is refused whole when it is not a manifest", () => {
    expect(() => checkManifest({ files: "x" }, "t")).toThrow(ManifestError);
    expect(() => checkManifest(null, "t")).toThrow(/not one keel wrote/);
  });

  it("paths inside: names, none empty, . or ..", () => {
    expect(["a", "a/b", ".a", "a..b", "..a/b"].map(isInsidePath)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(
      ["", "..", ".", "/a", "a/", "a//b", "a/./b", "a/../b", "a\0b"].map(isInsidePath),
    ).toEqual(Array(9).fill(false));
  });
});

describe("a unit's standing when a coordinator starts (again)", () => {
  const job = (state: AnalysisJob["state"]): AnalysisJob => ({ key: "k", state, output: null });
  const finding = { model: "m", depth: "deep", finding: {} };
  const failed = { model: "m", depth: "deep", failed: "schema" };

  it("done, waited for, failed or to send", () => {
    expect(standingOf(finding, [], "m", "deep")).toBe("reused");
    expect(standingOf(finding, [job("completed")], "m", "deep")).toBe("analyzed");
    expect(standingOf(failed, [job("completed")], "m", "deep")).toBe("failed");
    expect(standingOf(failed, [], "m", "deep")).toBe("send"); // an earlier run's: asked again
    expect(standingOf(undefined, [job("active")], "m", "deep")).toBe("waiting");
    expect(standingOf(undefined, [job("retry")], "m", "deep")).toBe("waiting");
    expect(standingOf(undefined, [job("failed")], "m", "deep")).toBe("failed-job");
    expect(standingOf(undefined, [], "m", "deep")).toBe("send");
    expect(standingOf({ ...finding, depth: "quick" }, [], "m", "deep")).toBe("send");
  });
});

describe("a worker's settings for a job", () => {
  it("come from its flags over the person's own file: never a project's, whatever the job or the folder", () => {
    const home = tempWorkspace("keel-worker-home-");
    mkdirSync(path.join(home, "keel"), { recursive: true });
    writeFileSync(
      path.join(home, "keel/settings.json"),
      JSON.stringify({ contextWindow: 3000, temperature: 0.5 }),
    );
    const cwd = tempWorkspace("keel-worker-cwd-");
    mkdirSync(path.join(cwd, ".keel"));
    writeFileSync(path.join(cwd, ".keel/settings.json"), JSON.stringify({ contextWindow: 5000 }));
    const was = { xdg: process.env.XDG_CONFIG_HOME, cwd: process.cwd() };
    process.env.XDG_CONFIG_HOME = home;
    process.chdir(cwd);
    try {
      const job = { model: "m", depth: "quick", provider: "ollama", url: "http://gpu:1" } as const;
      const s = analystSettingsFrom(jobConfig("run-1", { temperature: 0.1 }, job));
      expect(s).toMatchObject({
        contextWindow: 3000,
        temperature: 0.1,
        model: "m",
        depth: "quick",
        serverUrl: "http://gpu:1",
      });
      // resolved per job: the next job reads the file as it is then
      writeFileSync(path.join(home, "keel/settings.json"), JSON.stringify({ contextWindow: 4000 }));
      expect(analystSettingsFrom(jobConfig("run-2", {}, job)).contextWindow).toBe(4000);
    } finally {
      process.chdir(was.cwd);
      if (was.xdg === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = was.xdg;
    }
  });
});
