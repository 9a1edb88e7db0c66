/** The distributed analyst's pure parts: job keys and checks, the server pool, the fold plan, the status figures. */
import { describe, expect, it } from "vitest";
import { FoldPlan } from "../../src/distributed/fold-plan.js";
import { checkUnitJob, unitJobKey, type UnitJob } from "../../src/distributed/jobs.js";
import { parseServers, ServerPool } from "../../src/distributed/pool.js";
import { retryDeadlock, sizePriority, type CensusRow } from "../../src/distributed/queue.js";
import { formatStatusLine, runStatuses } from "../../src/distributed/status.js";

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

describe("job priority", () => {
  it("grows by one per doubling of the unit's size from 1 KB: large units are taken first", () => {
    expect([0, 500, 1024, 1025, 2048, 4096, 1024 * 1024].map(sizePriority)).toEqual([
      0, 0, 0, 1, 1, 2, 10,
    ]);
  });
});

describe("server pool", () => {
  const two = () =>
    new ServerPool(parseServers(["http://a:1", "http://b:2/v1"], "ollama"), {
      baseMs: 1000,
      maxMs: 4000,
    });

  it("reads the provider from the URL: /v1 is OpenAI-compatible", () => {
    expect(parseServers(["http://a:1/", "http://b:2/v1"], "ollama")).toEqual([
      { url: "http://a:1", provider: "ollama" },
      { url: "http://b:2/v1", provider: "openai" },
    ]);
    expect(() => parseServers([], "ollama")).toThrow(/at least one --server/);
    expect(() => parseServers(["gpu1"], "ollama")).toThrow(/not a URL/);
    expect(() => parseServers(["ftp://x"], "ollama")).toThrow(/http/);
  });

  it("gives each unit the least-busy server; idle servers take turns", () => {
    const p = two();
    expect(p.take(0)?.url).toBe("http://a:1");
    expect(p.take(0)?.url).toBe("http://b:2/v1");
    expect(p.take(0)?.url).toBe("http://a:1");
    p.release("http://a:1", { ok: true });
    p.release("http://a:1", { ok: true });
    expect(p.take(0)?.url).toBe("http://a:1"); // b is busy
    p.release("http://a:1", { ok: true });
    p.release("http://b:2/v1", { ok: true });
    const turns = [0, 1, 2, 3].map(() => {
      const s = p.take(0)!;
      p.release(s.url, { ok: true });
      return s.url;
    });
    expect(turns).toEqual(["http://b:2/v1", "http://a:1", "http://b:2/v1", "http://a:1"]);
  });

  it("takes a failing server out of rotation, with a doubling back-off, and back after a success", () => {
    const p = two();
    p.take(0);
    p.release("http://a:1", { ok: false, error: "refused", now: 0 });
    expect(p.take(10)?.url).toBe("http://b:2/v1");
    expect(p.take(10)?.url).toBe("http://b:2/v1"); // a is out, however idle
    expect(p.states(10)[0]).toEqual({
      url: "http://a:1",
      inFlight: 0,
      up: false,
      lastError: "refused",
    });
    expect(p.take(1000)?.url).toBe("http://a:1"); // retried at its time
    p.release("http://a:1", { ok: false, error: "refused", now: 1000 });
    expect(p.states(2999)[0]!.up).toBe(false); // 2 s now
    expect(p.states(3000)[0]!.up).toBe(true);
    p.take(3000);
    p.release("http://a:1", { ok: true });
    p.take(3000);
    p.release("http://a:1", { ok: false, error: "x", now: 3000 });
    expect(p.states(4000)[0]!.up).toBe(true); // the success reset the back-off to 1 s
  });

  it("says when the next server is back when all are out", () => {
    const p = two();
    p.take(0);
    p.take(0);
    p.release("http://a:1", { ok: false, error: "x", now: 0 });
    expect(p.nextUp(0)).toBe(0);
    p.release("http://b:2/v1", { ok: false, error: "x", now: 500 });
    expect(p.take(600)).toBeUndefined();
    expect(p.nextUp(600)).toBe(1000);
  });
});

describe("fold plan", () => {
  const files = ["a/x.ts", "a/b/y.ts", "a/b/z.ts", "c/w.ts", "top.ts"];
  const folders = ["a/b", "a", "c", "."];

  it("a folder is ready once its files and subfolders are done; the root last", () => {
    const p = new FoldPlan(files, folders);
    expect(p.initiallyReady()).toEqual([]);
    expect(p.unitDone("a/b/y.ts")).toEqual([]);
    expect(p.unitDone("a/x.ts")).toEqual([]); // a waits for a/b
    expect(p.unitDone("a/b/z.ts")).toEqual(["a/b"]);
    expect(p.folderDone("a/b")).toEqual(["a"]);
    expect(p.unitDone("top.ts")).toEqual([]);
    expect(p.folderDone("a")).toEqual([]);
    expect(p.unitDone("c/w.ts")).toEqual(["c"]);
    expect(p.folderDone("c")).toEqual(["."]);
    expect(p.folderDone(".")).toEqual([]);
  });

  it("a folder holding only subfolders waits for them", () => {
    const p = new FoldPlan(["src/a/x.ts"], ["src/a", "src", "."]);
    expect(p.unitDone("src/a/x.ts")).toEqual(["src/a"]);
    expect(p.folderDone("src/a")).toEqual(["src"]);
    expect(p.folderDone("src")).toEqual(["."]);
  });
});

describe("run status", () => {
  const a = (run: string, analysis = "a2") => ({ run, analysis });
  const rows: CensusRow[] = [
    { ...a("r1"), state: "completed", worker: "w1", count: 6, firstStart: 0, lastActivity: 9000 },
    {
      ...a("r1"),
      state: "completed",
      worker: "w2",
      count: 4,
      firstStart: 1000,
      lastActivity: 9500,
    },
    { ...a("r1"), state: "active", worker: null, count: 2, firstStart: 8000 },
    { ...a("r1"), state: "created", worker: null, count: 7 },
    { ...a("r1"), state: "retry", worker: null, count: 1 },
    { ...a("r1"), state: "failed", worker: null, count: 1, firstStart: 500 },
    // an earlier analysis of the same run: not counted
    {
      ...a("r1", "a1"),
      state: "completed",
      worker: "w1",
      count: 50,
      firstStart: 0,
      lastActivity: 10,
    },
    { ...a("r0"), state: "completed", worker: "w1", count: 3, firstStart: 0 },
  ];

  it("counts done, in flight, queued and failed per run, per worker, with rate and ETA", () => {
    const [r1, r0] = runStatuses(rows, 10_000);
    expect(r1).toEqual({
      run: "r1",
      analysis: "a2",
      total: 21,
      done: 10,
      inFlight: 2,
      queued: 8,
      failed: 1,
      perWorker: { w1: 6, w2: 4 },
      unitsPerSecond: 1,
      etaSeconds: 10,
    });
    expect(r0).toMatchObject({ run: "r0", done: 3, etaSeconds: 0 });
    expect(formatStatusLine(r1!)).toBe(
      "10/21 done | 2 in flight | 8 queued | 1 failed | 1.00 units/s | eta 10s | workers w1:6 w2:4",
    );
  });

  it("has no rate and no ETA before the first unit is done", () => {
    const [s] = runStatuses(
      [{ run: "r", analysis: "a", state: "created", worker: null, count: 5 }],
      1000,
    );
    expect(s).toMatchObject({ unitsPerSecond: null, etaSeconds: null });
    expect(formatStatusLine(s!)).toContain("– units/s | eta –");
  });
});

describe("opening the queue", () => {
  it("is tried again when Postgres ends it with a deadlock, and only then", async () => {
    let calls = 0;
    const deadlock = Object.assign(new Error("deadlock detected"), { code: "40P01" });
    const opened = await retryDeadlock(() =>
      ++calls < 3 ? Promise.reject(deadlock) : Promise.resolve("open"),
    );
    expect([opened, calls]).toEqual(["open", 3]);

    calls = 0;
    await expect(
      retryDeadlock(() => {
        calls++;
        return Promise.reject(new Error("password authentication failed"));
      }),
    ).rejects.toThrow(/password/);
    expect(calls).toBe(1);

    calls = 0;
    await expect(
      retryDeadlock(() => {
        calls++;
        return Promise.reject(deadlock);
      }, 2),
    ).rejects.toThrow(/deadlock/);
    expect(calls).toBe(2);
  });
});
