/**
 * keel eval against the fake with scripted model profiles (src/testing/eval-model.ts): the suite
 * itself is tested, its numbers checked against what each profile is scripted to do.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { EvalReport } from "../../src/eval/run.js";
import type { Stats } from "../../src/stats/runs.js";
import { EVAL_MODELS, evalModelScript } from "../../src/testing/eval-model.js";
import { runKeel } from "../support/cli.js";
import { fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();
const TASKS = [
  "create-greet",
  "edit-subtract",
  "analyse-find",
  "analyse-long",
  "run-tests",
  "recover-syntax",
];

async function evaluate(url: string, db: string, args: string[]) {
  const r = await runKeel(["eval", "--ollama-url", url, "--checkpoints", db, ...args]);
  expect(r.stderr).not.toMatch(/unexpected failure/);
  return {
    ...r,
    report:
      r.code === 0 && args.includes("--json") ? (JSON.parse(r.stdout) as EvalReport) : undefined,
  };
}

describe("keel eval", () => {
  it("measures the scripted profiles exactly: pass^k, well-formed, repaired, salvaged; and keel stats shows the runs", async () => {
    const fake = await startFake({ models: EVAL_MODELS, script: evalModelScript() });
    const ws = tempWorkspace();
    const db = `sqlite:${path.join(ws, "eval.db")}`;

    // steady: every task passes on both channels, every call well formed
    const steady = await evaluate(fake.url, db, ["--model", "steady", "-k", "3", "--json"]);
    expect(steady.code).toBe(0);
    const s = steady.report!;
    expect(s.passK).toEqual({ native: { tasks: 6, passed: 6 }, prompt: { tasks: 6, passed: 6 } });
    expect(s.scores.map((x) => [x.mode, x.task, x.passes, x.passK])).toEqual(
      ["native", "prompt"].flatMap((m) => TASKS.map((t) => [m, t, 3, true])),
    );
    expect(
      s.scores.every((x) => x.wellFormedRate === 1 && x.repairRate === 0 && x.salvageRate === 0),
    ).toBe(true);
    expect(s.scores.every((x) => x.rung === "none" && x.promptTokens > 0)).toBe(true);
    expect(s.attempts).toHaveLength(36);
    // calls per attempt as scripted: create 1, edit 2, analyse 1, the long file 1, run 1, recover 4
    expect(
      s.attempts.filter((a) => a.mode === "native" && a.attempt === 1).map((a) => a.calls),
    ).toEqual([1, 2, 1, 1, 1, 4]);
    expect(steady.stderr).toContain("[36/36]");

    // flaky: the second edit attempt writes a wrong fix → pass^3 fails for that task only
    const flaky = await evaluate(fake.url, db, [
      "--model",
      "flaky",
      "-k",
      "3",
      "--mode",
      "native",
      "--task",
      "edit-subtract",
      "--task",
      "create-greet",
      "--json",
    ]);
    expect(flaky.report!.scores.map((x) => [x.task, x.passes, x.passK])).toEqual([
      ["edit-subtract", 2, false],
      ["create-greet", 3, true],
    ]);
    expect(flaky.report!.attempts.find((a) => !a.pass)).toMatchObject({
      task: "edit-subtract",
      attempt: 2,
    });
    expect(flaky.report!.passK).toEqual({ native: { tasks: 2, passed: 1 } });

    // sloppy: the first call of each task uses a wrong field name, repaired: 5 of 9 calls
    const sloppy = await evaluate(fake.url, db, [
      "--model",
      "sloppy",
      "-k",
      "1",
      "--mode",
      "native",
      "--json",
    ]);
    const calls = sloppy.report!.attempts.reduce((n, a) => n + a.calls, 0);
    const repaired = sloppy.report!.attempts.reduce((n, a) => n + a.repaired, 0);
    expect([repaired, calls]).toEqual([4, 10]); // grep's first calls have no path to misname
    expect(sloppy.report!.passK.native).toEqual({ tasks: 6, passed: 6 });
    expect(sloppy.report!.scores.find((x) => x.task === "analyse-find")!.repairRate).toBe(0);
    expect(sloppy.report!.scores.find((x) => x.task === "create-greet")!.repairRate).toBe(1);

    // texty: calls as text on the native channel, salvaged in every turn that had calls
    const texty = await evaluate(fake.url, db, [
      "--model",
      "texty",
      "-k",
      "1",
      "--mode",
      "native",
      "--task",
      "recover-syntax",
      "--json",
    ]);
    const t = texty.report!.attempts[0]!;
    expect(t).toMatchObject({ pass: true, calls: 4, salvaged: 4 });
    expect(texty.report!.scores[0]!.salvageRate).toBeCloseTo(4 / t.turns);

    // the table people read
    const table = await evaluate(fake.url, db, [
      "--model",
      "steady",
      "-k",
      "1",
      "--mode",
      "prompt",
      "--task",
      "run-tests",
    ]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/run-tests\s+prompt\s+yes\s+1\/1\s+100%\s+0%\s+0%\s+none/);
    expect(table.stdout).toContain("steady · prompt: pass^1 1/1 tasks");

    // keel stats reads the same store: the eval runs per model, and the reports
    const stats = JSON.parse(
      (await runKeel(["stats", "--checkpoints", db, "--json"])).stdout,
    ) as Stats;
    expect(stats.models.map((m) => [m.model, m.runs])).toEqual([
      ["flaky", 6],
      ["sloppy", 6],
      ["steady", 37],
      ["texty", 1],
    ]);
    expect(stats.evals?.map((e) => e.model)).toEqual([
      "steady",
      "flaky",
      "sloppy",
      "texty",
      "steady",
    ]);
  }, 180_000);

  it("says when the server cannot be reached, and refuses a store that would forget", async () => {
    const down = await runKeel([
      "eval",
      "--model",
      "steady",
      "--ollama-url",
      "http://127.0.0.1:9",
      "-k",
      "1",
      "--task",
      "create-greet",
      "--checkpoints",
      `sqlite:${path.join(tempWorkspace(), "e.db")}`,
    ]);
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(/keel: .*127\.0\.0\.1:9/);
    const memory = await runKeel(["eval", "--model", "steady", "--checkpoints", "memory"]);
    expect(memory.code).toBe(2);
    expect(memory.stderr).toContain("keel eval keeps its runs");
  });
});
