/**
 * `keel analyze` end to end: SIGKILL at three random moments and resume (same report as an
 * uninterrupted run, every unit analysed once but for the ones in flight at a kill), and the
 * structural report when no Ollama is there.
 */
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { ChatBody, FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { analystScript, keelScript } from "../../src/testing/script.js";
import { closedPort, runKeel } from "../support/cli.js";
import { generateRepo, type FixtureInfo } from "../support/fixture-repo.js";
import { fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

let base: string;
let info: FixtureInfo;
beforeAll(() => {
  base = tempWorkspace("keel-fixture-");
  info = generateRepo(base);
});
const copy = () => {
  const dir = tempWorkspace("keel-an-");
  cpSync(base, dir, { recursive: true });
  return dir;
};

/** What a request analyses: a unit, a folder, or the report. */
const subject = (b: ChatBody) => {
  const text = b.messages!.map((m) => m.content).join("\n");
  return (
    /<unit path="([^"]+)"/.exec(text)?.[1] ??
    (/<folder path="([^"]+)"/.exec(text)
      ? `dir:${/<folder path="([^"]+)"/.exec(text)![1]}`
      : "report")
  );
};
const reportOf = (dir: string) => {
  const r = JSON.parse(readFileSync(path.join(dir, ".keel/report.json"), "utf8")) as Record<
    string,
    unknown
  >;
  return { ...r, name: "fixture" };
};

describe("keel analyze", () => {
  it("resumes after SIGKILL at three random moments: the same report, nothing redone but what was in flight", async () => {
    fake = await startFake({ script: analystScript() });
    const clean = copy();
    const whole = await runKeel([
      "analyze",
      clean,
      "--ollama-url",
      fake.url,
      "--concurrency",
      "1",
      "--json",
    ]);
    expect(whole.code).toBe(0);
    const total = fake.chatRequests().length;
    expect(whole.json).toMatchObject({ status: "done", units: 320, analyzed: 320, reused: 0 });

    const target = copy();
    const kills = [
      ...new Set(Array.from({ length: 3 }, () => 1 + Math.floor(Math.random() * (total - 2)))),
    ].sort((a, b) => a - b);
    const before = fake.chatRequests().length;
    const inFlight: string[] = [];
    // A unit in flight is redone whole: every request it had made in the killed run comes again.
    const redone = new Map<string, number>();
    let seen = 0;
    let last: Awaited<ReturnType<typeof runKeel>> | undefined;
    for (let run = 0; run <= kills.length; run++) {
      last = await runKeel(
        ["analyze", target, "--ollama-url", fake.url, "--concurrency", "1", "--json"],
        {
          onSpawn: (child) => {
            const thisRun = new Map<string, number>();
            fake!.onChat((req) => {
              seen++;
              const s = subject(req.body);
              thisRun.set(s, (thisRun.get(s) ?? 0) + 1);
              if (run < kills.length && seen === kills[run]) {
                inFlight.push(s);
                redone.set(s, (redone.get(s) ?? 0) + thisRun.get(s)!);
                // The request in flight never gets its answer: the kill lands before any reply.
                fake!.inject({ fault: "hang" });
                child.kill("SIGKILL");
              }
            });
          },
        },
      );
      if (run < kills.length)
        expect(last.signal, `kill ${run} at request ${kills[run]}`).toBe("SIGKILL");
    }
    expect(last!.code).toBe(0);
    expect(last!.stderr).toContain("resuming analysis thread");
    expect(reportOf(target)).toEqual(reportOf(clean));

    const counts = new Map<string, number>();
    for (const b of fake.chatBodies().slice(before))
      counts.set(subject(b), (counts.get(subject(b)) ?? 0) + 1);
    const expected = new Map<string, number>();
    for (const b of fake.chatBodies().slice(0, before))
      expected.set(subject(b), (expected.get(subject(b)) ?? 0) + 1);
    for (const [s, n] of redone) expected.set(s, expected.get(s)! + n);
    expect(
      Object.fromEntries(counts),
      `kills at ${kills.join(", ")}; in flight: ${inFlight.join(", ")}`,
    ).toEqual(Object.fromEntries(expected));
    expect(
      [...counts.keys()].filter((k) => !k.startsWith("dir:") && k !== "report").sort(),
    ).toEqual(info.units);
  });

  it("Ctrl-C stops after the step in flight: exit 130, the outcome as JSON, and the same command resumes", async () => {
    fake = await startFake({ script: analystScript() });
    const target = copy();
    const args = ["analyze", target, "--ollama-url", fake.url, "--concurrency", "1", "--json"];
    let asked = 0;
    const stopped = await runKeel(args, {
      onSpawn: (child) =>
        fake!.onChat(() => {
          if (++asked === 5) child.kill("SIGINT");
        }),
    });
    expect(stopped.stderr).not.toMatch(/unexpected failure|TypeError|at /);
    expect(stopped.code).toBe(130);
    expect(stopped.json).toMatchObject({ status: "interrupted", model: "qwen3:8b", units: 320 });
    fake.onChat(() => undefined);
    const resumed = await runKeel(args);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain("resuming analysis thread");
    expect(resumed.json).toMatchObject({ status: "done", model: "qwen3:8b", units: 320 });
  });

  it("without Ollama writes the structural report, says so, and exits 0", async () => {
    const target = copy();
    const r = await runKeel(["analyze", target, "--ollama-url", "http://127.0.0.1:9", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      status: "done",
      model: null,
      units: 320,
      report: path.join(target, ".keel/report.md"),
    });
    expect(String(r.json?.no_model_reason)).toContain("ollama serve");
    expect(r.stderr).toContain("NO MODEL IS USED");
    expect(readFileSync(path.join(target, ".keel/report.md"), "utf8")).toContain(
      "**No model was used.**",
    );
  });

  it("a thread of the other graph is refused by name, and left as it was", async () => {
    const dir = tempWorkspace("keel-an-other-");
    writeFileSync(path.join(dir, "a.py"), "x = 1\n");
    const analysis = await runKeel(["analyze", ".", "-m", "none", "--thread", "an-1", "--json"], {
      cwd: dir,
    });
    expect(analysis.code, analysis.stderr).toBe(0);
    const asRun = await runKeel(["run", "--thread", "an-1"], { cwd: dir });
    expect(asRun.code).toBe(2);
    expect(asRun.stderr).toContain(
      "thread an-1 is an analysis (keel analyze), not a coding run: continue it with keel analyze <folder> --thread an-1",
    );
    fake = await startFake({ script: keelScript(() => ({ content: "It sets x to 1." })) });
    const run = await runKeel(
      ["run", "Explain a.py", "--ollama-url", fake.url, "--thread", "c-1"],
      {
        cwd: dir,
      },
    );
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const asAnalysis = await runKeel(["analyze", ".", "-m", "none", "--thread", "c-1"], {
      cwd: dir,
    });
    expect(asAnalysis.code).toBe(2);
    expect(asAnalysis.stderr).toContain("thread c-1 is a coding run (keel run), not an analysis");
    // the coding thread is as the run left it: resuming it says it is done, not an analysis
    const again = await runKeel(["run", "--thread", "c-1"], { cwd: dir });
    expect(again.stderr).toContain("thread c-1 is finished (done)");
  });

  it("a file name with newlines and escapes writes no line of its own into the report", async () => {
    const target = tempWorkspace();
    writeFileSync(path.join(target, "a\ntouch PWNED\n.py"), "x = 1\n");
    writeFileSync(path.join(target, "b\x1b]52;c;aGk=\x07.py"), "y = 2\n");
    const r = await runKeel(["analyze", target, "-m", "none", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = readFileSync(path.join(target, ".keel/report.md"), "utf8");
    expect(report).toContain("a\\ntouch PWNED\\n.py");
    expect(report.split("\n").some((l) => l.trim() === "touch PWNED")).toBe(false);
    expect(report).not.toContain("\x1b");
  });

  it("writes the report where --out says, and a human summary without --json", async () => {
    const target = copy();
    const out = path.join(tempWorkspace(), "r.md");
    const r = await runKeel([
      "analyze",
      target,
      "--model",
      "none",
      "--out",
      out,
      "--depth",
      "quick",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`report: ${out}`);
    expect(readFileSync(out.replace(/\.md$/, ".json"), "utf8")).toContain('"depth": "quick"');
  });

  it("never reads its own reports: a report written into the analysed folder is not a unit next time", async () => {
    fake = await startFake({
      script: analystScript(),
      models: {
        "small:8b": { capabilities: ["completion"], family: "llama", contextLength: 8192 },
      },
    });
    const target = copy();
    const args = (out: string) => [
      "analyze",
      target,
      "--model",
      "small:8b",
      "--ollama-url",
      fake!.url,
      "--out",
      path.join(target, out),
      "--depth",
      "quick",
      "--json",
    ];
    const first = await runKeel(args("docs/analysis.md"));
    expect(first.code).toBe(0);
    expect(readFileSync(path.join(target, "docs/analysis.md"), "utf8")).toMatch(
      /^<!-- keel-analyze-report/,
    );
    // a second run with another --out: neither the first run's reports nor its own are analysed
    const before = fake.chatRequests().length;
    const second = await runKeel(args("notes/again.md"));
    expect(second.code).toBe(0);
    expect(second.json).toMatchObject({ units: 320 });
    const units = fake
      .chatBodies()
      .slice(before)
      .map(subject)
      .filter((u) => !u.startsWith("dir:") && u !== "report");
    expect(units.filter((u) => /analysis\.|again\./.test(u))).toEqual([]);
    // the window is the model's (8,192), not the 16,384 keel asks for by default
    expect(
      fake.chatBodies().every((b) => (b.options as { num_ctx?: number }).num_ctx === 8192),
    ).toBe(true);
    expect(
      Math.max(...fake.chatBodies().map((b) => JSON.stringify(b.messages).length)),
    ).toBeLessThan(8192 * 3.5);
  });

  it("--model asked for by name and not there: exit 3 with the reason, the earlier report left alone", async () => {
    const target = tempWorkspace();
    writeFileSync(path.join(target, "a.py"), "x = 1\n");
    const first = await runKeel(["analyze", target, "-m", "none", "--json"]);
    expect(first.code, first.stderr).toBe(0);
    const reportPath = path.join(target, ".keel/report.md");
    const before = readFileSync(reportPath, "utf8");
    writeFileSync(reportPath, `${before}\nkept\n`);
    const down = `http://127.0.0.1:${await closedPort()}`;
    const r = await runKeel(["analyze", target, "-m", "qwen3:8b", "--ollama-url", down, "--json"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`keel: cannot reach the Ollama server at ${down}`);
    expect(r.json).toMatchObject({ status: "error" });
    fake = await startFake({
      script: analystScript(),
      models: { "small:8b": { capabilities: ["completion"], family: "llama" } },
    });
    const missing = await runKeel(["analyze", target, "-m", "nosuch", "--ollama-url", fake.url]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('has no model "nosuch"');
    expect(missing.stdout).not.toContain("DONE");
    expect(fake.chatRequests()).toHaveLength(0);
    expect(readFileSync(reportPath, "utf8")).toBe(`${before}\nkept\n`);
  });

  it("a folder that is not there, or --out naming a folder: exit 2, nothing created", async () => {
    const missing = path.join(tempWorkspace(), "no/such/folder");
    const r = await runKeel(["analyze", missing, "-m", "none"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`keel: ${missing} is not an existing folder`);
    expect(existsSync(missing)).toBe(false);
    const target = tempWorkspace();
    writeFileSync(path.join(target, "a.py"), "x = 1\n");
    const out = tempWorkspace();
    const o = await runKeel(["analyze", target, "-m", "none", "-o", out]);
    expect(o.code).toBe(2);
    expect(o.stderr).toContain(`keel: output path ${out} is a folder`);
    expect(o.stderr).not.toContain("unexpected failure");
    expect(existsSync(path.join(target, ".keel"))).toBe(false);
  });
});
