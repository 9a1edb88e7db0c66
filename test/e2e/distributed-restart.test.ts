/**
 * The coordinator and the workers come and go, on a real PostgreSQL with the default settings: a
 * coordinator killed with SIGKILL mid-run and started again with the same command resumes the same
 * analysis (units done stay done, units in flight are neither lost nor sent twice) and writes the
 * single-process report; a second coordinator for the same folder is refused with the holder
 * named; a worker sent SIGTERM finishes the unit in hand, leaves, and shows as stopped.
 */
import type { ChildProcess } from "node:child_process";
import { cpSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
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
import { generateRepo } from "../support/fixture-repo.js";
import { fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();
const UNITS = 24;

let base: string;
let baseline: Record<string, unknown>;
beforeAll(async () => {
  base = tempWorkspace("keel-restart-fixture-");
  generateRepo(base, UNITS);
  const fake = await startFake({ script: analystScript() });
  baseline = await singleProcessReport(copy(), fake.url, path.join(tempWorkspace(), "keel.db"));
  await fake.close();
}, 120_000);

const copy = () => {
  const dir = tempWorkspace("keel-restart-");
  cpSync(base, dir, { recursive: true });
  return dir;
};
const completed = async (url: string) =>
  Number(
    (
      await query<{ n: string }>(
        url,
        "SELECT count(*)::text AS n FROM keel_queue.job WHERE state = 'completed'",
      )
    )[0]!.n,
  );

describe("coordinators and workers that come and go", () => {
  it("a coordinator killed with SIGKILL mid-run and started again resumes: the same report, no unit sent or counted twice", async () => {
    const url = await freshDb("restart");
    const fakes = await slowServers(startFake, 2, 150);
    const ws = fakes.map((f, i) => worker(url, `w${i + 1}`, [f.url]));
    const dir = copy();
    let coordinator: ChildProcess | undefined;
    const first = runKeel(analyzeArgs(dir, url, fakes[0]!, ["--queue-window", "6"]), {
      onSpawn: (c) => (coordinator = c),
    });
    // killed once a few units are done and others are in flight
    for (;;) {
      if ((await query(url, "SELECT to_regclass('keel_queue.job') AS t"))[0]) {
        const n = await completed(url).catch(() => 0);
        if (n >= 4) break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    coordinator!.kill("SIGKILL");
    expect((await first).signal).toBe("SIGKILL");
    const r = await runKeel(analyzeArgs(dir, url, fakes[0]!, ["--queue-window", "6"]));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("resuming analysis thread");
    expect(r.json).toMatchObject({ status: "done", units: UNITS, failed: 0 });
    // the units the workers finished for this analysis count as analysed, before the kill or after
    expect(r.json).toMatchObject({ analyzed: UNITS, reused: 0 });
    expect(reportOf(dir)).toEqual(baseline);
    const results = await stopAll(ws);
    expect(results.map((x) => x.code)).toEqual([0, 0]);
    expect(results.reduce((a, x) => a + (x.json as { analyzed: number }).analyzed, 0)).toBe(UNITS);
    expect(await ledger(url)).toMatchObject({
      states: { completed: UNITS },
      sentTwice: 0,
      findings: UNITS,
      distinctFindings: UNITS,
    });
  }, 120_000);

  it("a second coordinator for the same folder is refused, the holder named", async () => {
    const url = await freshDb("twice");
    const fake = await startFake({ script: analystScript() });
    const dir = copy();
    let coordinator: ChildProcess | undefined;
    // no workers: the first waits for them
    const first = runKeel(analyzeArgs(dir, url, fake), { onSpawn: (c) => (coordinator = c) });
    for (;;) {
      const t = await query<{ t: string | null }>(
        url,
        "SELECT to_regclass('keel_queue.job')::text AS t",
      );
      if (t[0]!.t) {
        const [n] = await query<{ n: string }>(
          url,
          "SELECT count(*)::text AS n FROM keel_queue.job",
        );
        if (n!.n !== "0") break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const second = await runKeel(analyzeArgs(dir, url, fake));
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(
      `the analysis of ${dir} is running in another keel (keel pid ${coordinator!.pid} on `,
    );
    coordinator!.kill("SIGKILL");
    await first;
  });

  it("a worker sent SIGTERM finishes the unit in hand, leaves, and shows as stopped", async () => {
    const url = await freshDb("sigterm");
    const fakes = await slowServers(startFake, 2, 400);
    const ws = fakes.map((f, i) => worker(url, `w${i + 1}`, [f.url]));
    let asked: string | undefined;
    fakes[0]!.onChat((req, index) => {
      if (index !== 1) return;
      asked = /<unit path="([^"]+)"/.exec(req.messages.map((m) => m.content).join("\n"))?.[1];
      ws[0]!.child!.kill("SIGTERM");
    });
    const dir = copy();
    const r = await runKeel(analyzeArgs(dir, url, fakes[1]!));
    expect(r.code, r.stderr).toBe(0);
    expect(reportOf(dir)).toEqual(baseline);
    const w1 = await ws[0]!.done;
    expect(w1.code).toBe(0);
    expect(w1.stderr).toContain("SIGTERM: finishing the units in hand");
    // the unit it held when told to stop was finished by it, not taken over
    expect(asked).toBeDefined();
    const [held] = await query<{ worker: string; retry_count: number }>(
      url,
      "SELECT output->>'worker' AS worker, retry_count FROM keel_queue.job WHERE data->'unit'->>'path' = $1",
      [asked],
    );
    expect(held).toEqual({ worker: "w1", retry_count: 0 });
    const status = await runKeel(["analyze", "--status", "--postgres", url]);
    expect(status.stdout).toMatch(
      /w1 \([^)]+\) stopped, seen \d+s ago, [1-9]\d* units, 0 failures/,
    );
    expect(status.stdout).toMatch(/w2 \([^)]+\) alive, seen \d+s ago/);
    await stopAll(ws.slice(1));
  }, 90_000);
});
