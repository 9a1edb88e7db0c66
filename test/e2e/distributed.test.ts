/**
 * The distributed analyst end to end on a real PostgreSQL: three `keel worker` processes, three
 * fake model servers on loopback, one `keel analyze --postgres URL --workers`, all with the
 * default settings. The report equals the single-process report; a worker killed with SIGKILL
 * mid-unit loses nothing and counts nothing twice, and its unit runs elsewhere within seconds
 * (not a 900 s lease); a server taken down mid-run leaves the run to the others; bad input is named.
 */
import { appendFileSync, cpSync, readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openQueue } from "../../src/distributed/queue.js";
import { analystScript } from "../../src/testing/script.js";
import { runKeel } from "../support/cli.js";
import {
  analyzeArgs,
  freshDb,
  ledger,
  query,
  reportOf,
  singleProcessReport,
  slowServers,
  stopAll,
  worker,
} from "../support/distributed.js";
import { generateRepo, type FixtureInfo } from "../support/fixture-repo.js";
import { fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();
const UNITS = 36;

let base: string;
let info: FixtureInfo;
let baseline: Record<string, unknown>;
beforeAll(async () => {
  base = tempWorkspace("keel-dist-fixture-");
  info = generateRepo(base, UNITS);
  const fake = await startFake({ script: analystScript() });
  baseline = await singleProcessReport(copy(), fake.url, path.join(tempWorkspace(), "keel.db"));
  await fake.close();
}, 120_000);

const copy = () => {
  const dir = tempWorkspace("keel-dist-");
  cpSync(base, dir, { recursive: true });
  return dir;
};
const servers = (delayMs: number) => slowServers(startFake, 3, delayMs);
const analyze = (dir: string, url: string, fake: { url: string }, extra: string[] = []) =>
  runKeel(analyzeArgs(dir, url, fake as never, extra));

describe("keel analyze --workers", () => {
  it("three workers on three servers write the single-process report; a re-run enqueues only what changed", async () => {
    const url = await freshDb("dist");
    const fakes = await servers(20);
    const urls = fakes.map((f) => f.url);
    const ws = ["w1", "w2", "w3"].map((n) => worker(url, n, urls));
    const dir = copy();
    const r = await analyze(dir, url, fakes[0]!);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ status: "done", units: UNITS, analyzed: UNITS, reused: 0 });
    expect(reportOf(dir)).toEqual(baseline);
    // every unit analysed once, by someone; each worker took part
    const results = await stopAll(ws);
    const sums = results.map((x) => x.json as { analyzed: number; duplicates: number });
    expect(results.map((x) => x.code)).toEqual([0, 0, 0]);
    expect(sums.reduce((a, s) => a + s.analyzed, 0)).toBe(UNITS);
    expect(sums.every((s) => s.analyzed > 0)).toBe(true);
    expect(await ledger(url)).toEqual({
      states: { completed: UNITS },
      retried: 0,
      sentTwice: 0,
      findings: UNITS,
      distinctFindings: UNITS,
    });
    // the status command reads the same queue
    const status = await runKeel(["analyze", "--status", "--postgres", url]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(`${UNITS}/${UNITS} done \\| 0 in flight \\| 0 queued \\| 0 failed`),
    );
    expect(status.stdout).toMatch(/workers w1:\d+ w2:\d+ w3:\d+/);
    // each worker's health: stopped cleanly here (SIGTERM), its units, failures and server
    for (const w of ["w1", "w2", "w3"])
      expect(status.stdout).toMatch(
        new RegExp(
          `${w} \\([^)]+\\) stopped, seen \\d+s ago, \\d+ units, 0 failures, servers ${urls.join(" ")}`,
        ),
      );

    // one file changes: one job more, no worker needed for the rest; the old version's finding goes
    const changed = info.units.find((u) => u.endsWith(".ts"))!;
    appendFileSync(path.join(dir, changed), "export const extra = 1;\n");
    const again = [worker(url, "w4", urls)];
    const r2 = await analyze(dir, url, fakes[0]!);
    expect(r2.json).toMatchObject({ status: "done", analyzed: 1, reused: UNITS - 1 });
    const [w4] = await stopAll(again);
    expect(w4!.json).toMatchObject({ analyzed: 1 });
    expect(await ledger(url)).toMatchObject({ states: { completed: UNITS + 1 }, findings: UNITS });
  }, 120_000);

  it("a worker killed with SIGKILL mid-unit, default settings: its unit runs elsewhere within seconds, the same report, nothing counted twice", async () => {
    const url = await freshDb("kill");
    const fakes = await servers(40);
    // each worker has its own server, so the victim's requests are known
    const ws = fakes.map((f, i) => worker(url, `w${i + 1}`, [f.url]));
    const victim = ws[0]!;
    let killed = false;
    fakes[0]!.onChat((_req, index) => {
      if (index === 3 && !killed) {
        killed = true;
        fakes[0]!.inject({ fault: "hang" });
        victim.child!.kill("SIGKILL");
      }
    });
    const dir = copy();
    // a short queue: the coordinator tops it up as units complete. No --lease: the default (900 s)
    // would end this test by its timeout if the dead worker's unit waited for it
    const r = await analyze(dir, url, fakes[1]!, ["--queue-window", "5"]);
    expect(r.code, r.stderr).toBe(0);
    expect(killed).toBe(true);
    expect((await victim.done).signal).toBe("SIGKILL");
    expect(r.json).toMatchObject({ status: "done", units: UNITS, analyzed: UNITS, failed: 0 });
    expect(reportOf(dir)).toEqual(baseline);
    const results = await stopAll(ws.slice(1));
    expect(results.map((x) => x.code)).toEqual([0, 0]);
    const l = await ledger(url);
    expect(l).toMatchObject({
      states: { completed: UNITS },
      sentTwice: 0,
      findings: UNITS,
      distinctFindings: UNITS,
    });
    expect(l.retried).toBe(1); // the unit in flight at the kill, taken over once
    // taken over because its session ended, not because a lease ran out
    const [retried] = await query<{ output: { worker: string }; error: string }>(
      url,
      "SELECT output FROM keel_queue.job WHERE retry_count > 0",
    );
    expect(retried!.output.worker).not.toBe("w1");
    const status = await runKeel(["analyze", "--status", "--postgres", url]);
    expect(status.stdout).toMatch(/w1 \([^)]+\) gone, seen \d+s ago, \d+ units/);
  }, 120_000);

  it("a model server taken down mid-run: the run completes on the others", async () => {
    const url = await freshDb("down");
    const fakes = await servers(20);
    const urls = fakes.map((f) => f.url);
    const ws = ["w1", "w2", "w3"].map((n) => worker(url, n, urls));
    let closed: Promise<void> | undefined;
    fakes[2]!.onChat((_req, index) => {
      if (index === 2) closed = fakes[2]!.close();
    });
    const dir = copy();
    const r = await analyze(dir, url, fakes[0]!);
    expect(r.code, r.stderr).toBe(0);
    expect(
      closed,
      `requests per server: ${fakes.map((f) => f.chatRequests().length).join(", ")}`,
    ).toBeDefined();
    expect(r.json).toMatchObject({ status: "done", analyzed: UNITS, failed: 0 });
    expect(reportOf(dir)).toEqual(baseline);
    const results = await stopAll(ws);
    expect(results.some((x) => x.stderr.includes(`server ${fakes[2]!.url} out of rotation`))).toBe(
      true,
    );
    expect((await ledger(url)).states).toEqual({ completed: UNITS });
  }, 120_000);

  it("a new database's queue opened by several at once, as workers and coordinator do: every one opens", async () => {
    const url = await freshDb("race");
    // as `keel worker`s (with maintenance) and `keel analyze --workers` (without) open it
    const queues = await Promise.all(
      Array.from({ length: 6 }, (_, i) => openQueue(url, i % 2 ? { maintenanceSeconds: 30 } : {})),
    );
    expect(queues).toHaveLength(6);
    await Promise.all(queues.map((q) => q.close()));
  });

  it("a unit that fails three times is reported as failed, not retried forever; the others complete", async () => {
    const url = await freshDb("fail");
    const dir = tempWorkspace("keel-dist-small-");
    const { mkdirSync, writeFileSync } = await import("node:fs");
    mkdirSync(path.join(dir, "src"));
    for (let i = 0; i < 4; i++)
      writeFileSync(path.join(dir, `src/m${i}.ts`), `export const v${i} = ${i};\n`);
    const scripted = analystScript();
    const bad = await startFake({
      script: (req) =>
        req.messages.some((m) => m.content.includes('<unit path="src/m2.ts"'))
          ? { fault: "status", status: 400, error: "this unit's request is refused" }
          : scripted(req),
    });
    const w = worker(url, "w1", [bad.url]);
    const r = await analyze(dir, url, bad);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ status: "done", units: 4, analyzed: 3, failed: 1 });
    const report = JSON.parse(readFileSync(path.join(dir, ".keel/report.json"), "utf8")) as {
      units: Array<{ path: string; failed?: string; purpose?: string }>;
    };
    const m2 = report.units.find((u) => u.path === "src/m2.ts")!;
    expect(m2.failed).toMatch(/^failed 3 times on the workers: ./);
    expect(report.units.filter((u) => u.purpose).length).toBe(3);
    // a refused request fails the unit, not the server: three attempts, one request each, no more
    const asked = bad
      .chatBodies()
      .filter((b) => JSON.stringify(b.messages).includes('<unit path=\\"src/m2.ts\\"'));
    expect(asked.length).toBe(3);
    const [res] = await stopAll([w]);
    expect(res!.json).toMatchObject({ analyzed: 3, failed: 3 });
    expect((await ledger(url)).states).toEqual({ completed: 3, failed: 1 });
  });

  it("names bad input: no --postgres, an unreachable database, a queue schema of another version", async () => {
    const noPg = await runKeel(["analyze", copy(), "--workers"]);
    expect(noPg.code).toBe(2);
    expect(noPg.stderr).toContain("--workers needs --postgres URL");
    const down = await runKeel([
      "worker",
      "--postgres",
      "postgres://keel@127.0.0.1:9/nope",
      "--server",
      "http://127.0.0.1:9",
    ]);
    expect(down.code).toBe(4);
    expect(down.stderr).toContain("postgres://…@127.0.0.1:9/nope");
    const url = await freshDb("schema");
    expect((await runKeel(["analyze", "--status", "--postgres", url])).stdout).toContain(
      "no analysis runs",
    );
    await query(url, "UPDATE keel_queue.version SET version = '23'");
    const old = await runKeel(["worker", "--postgres", url, "--server", "http://127.0.0.1:9"]);
    expect(old.code).toBe(4);
    expect(old.stderr).toContain("is version 23; this keel uses version 24");
  });
});
