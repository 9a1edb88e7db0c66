/**
 * keel stats end to end: runs with planted failures in one store, then `keel stats --json` must
 * report exactly their counts; `--html` writes a page that a real headless Chromium renders with
 * data in every chart (a screenshot is kept in test/artifacts/).
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Stats } from "../../src/stats/runs.js";
import { closedPort, runKeel } from "../support/cli.js";
import { call, calls, fakeOllamaPerTest, keelScript, tempWorkspace } from "../support/harness.js";
import { launchChromium } from "../support/browser.js";
import { workspaceState } from "../../src/files/state.js";

const startFake = fakeOllamaPerTest();

/** Two threads, three runs, each failure planted on purpose. */
const script = keelScript((req) => {
  const ask = [...req.messages]
    .reverse()
    .find((m) => m.role === "user" && !m.content.startsWith("[keel]"))?.content;
  const byModel = req.body.model;
  if (byModel === "qwen3:8b" && ask?.startsWith("Create the app")) {
    switch (req.turn) {
      case 0:
        return calls(call("make_dir", { path: "src/app.js" })); // wrong_tool
      case 1: // field alias, repaired
        return calls(call("write_file", { file_path: "src/app.js", content: "1\n" }));
      case 2:
        return calls(call("read_file", { path: "missing.js" })); // not_found
      case 3:
        return { ...calls(call("frobnicate", { x: 1 })), allowUnknownTools: true }; // unknown_tool
      default:
        return { content: "Created src/app.js." };
    }
  }
  if (byModel === "qwen3:8b") {
    // the follow-up request in the same thread: one clean read
    return req.last?.role === "tool"
      ? { content: "It contains 1." }
      : calls(call("read_file", { path: "src/app.js" }));
  }
  // llama3.1:8b lists the same folder until the loop guard cuts it
  if (req.messages.some((m) => m.role === "tool" && m.content.startsWith("Error [loop]")))
    return { content: "The folder is empty." };
  return calls(call("list_dir", { path: "." }));
});

describe("keel stats", () => {
  it("reports exactly the planted counts, and the page renders in a real browser", async () => {
    const fake = await startFake({ script });
    const ws = tempWorkspace();
    // the default store, named: `keel stats -w` reads it below
    const db = `sqlite:${workspaceState(ws).db}`;
    const base = ["-w", ws, "--ollama-url", fake.url, "--checkpoints", db, "--json"];
    expect(
      (await runKeel(["run", "Create the app in src/app.js", "--thread", "a", ...base])).code,
    ).toBe(0);
    expect((await runKeel(["run", "What is in src/app.js?", "--thread", "a", ...base])).code).toBe(
      0,
    );
    const b = await runKeel([
      "run",
      "What is in this folder?",
      "--thread",
      "b",
      "-m",
      "llama3.1:8b",
      ...base,
    ]);
    expect(b.code).toBe(0);

    const r = await runKeel(["stats", "-w", ws, "--json"]);
    expect(r.code).toBe(0);
    const stats = JSON.parse(r.stdout) as Stats;
    expect({ runs: stats.runs, threads: stats.threads }).toEqual({ runs: 3, threads: 2 });
    expect(
      stats.models.map(({ tokensPerSecond, promptTokens, generatedTokens, ...m }) => m),
    ).toEqual([
      {
        model: "llama3.1:8b",
        runs: 1,
        outcomes: { done: 1 },
        calls: 3,
        failures: 1,
        repaired: 0,
        salvaged: 0,
        loopsCut: 1,
        rungs: { none: 1 },
      },
      {
        model: "qwen3:8b",
        runs: 2,
        outcomes: { done: 2 },
        calls: 5,
        failures: 3,
        repaired: 1,
        salvaged: 0,
        loopsCut: 0,
        rungs: { none: 2 },
      },
    ]);
    expect(stats.tools).toEqual([
      { model: "llama3.1:8b", tool: "list_dir", calls: 3, failures: { loop: 1 }, repairs: {} },
      {
        model: "qwen3:8b",
        tool: "frobnicate",
        calls: 1,
        failures: { unknown_tool: 1 },
        repairs: {},
      },
      { model: "qwen3:8b", tool: "make_dir", calls: 1, failures: { wrong_tool: 1 }, repairs: {} },
      { model: "qwen3:8b", tool: "read_file", calls: 2, failures: { not_found: 1 }, repairs: {} },
      {
        model: "qwen3:8b",
        tool: "write_file",
        calls: 1,
        failures: {},
        repairs: { "field alias": 1 },
      },
    ]);
    expect(stats.models.every((m) => m.promptTokens > 0 && (m.tokensPerSecond ?? 0) > 0)).toBe(
      true,
    );

    // filters
    const only = JSON.parse(
      (await runKeel(["stats", "-w", ws, "--json", "-m", "llama3.1:8b"])).stdout,
    ) as Stats;
    expect(only.runs).toBe(1);
    const none = JSON.parse(
      (await runKeel(["stats", "-w", ws, "--json", "--since", "2999-01-01"])).stdout,
    ) as Stats;
    expect(none.runs).toBe(0);
    // filters that match nothing say so, and which models the store has runs of
    expect((await runKeel(["stats", "-w", ws, "-m", "nosuch:1b"])).stdout).toMatch(
      /^No coder runs match \(--model, --thread, --since, --until\); the store has runs of (qwen3:8b, llama3\.1:8b|llama3\.1:8b, qwen3:8b)\.$/m,
    );
    expect((await runKeel(["stats", "-w", ws])).stdout).toMatch(
      /qwen3:8b\s+make_dir\s+1\s+wrong_tool 1/,
    );

    // the page, in a real browser
    const page = path.join(ws, "stats.html");
    expect((await runKeel(["stats", "-w", ws, "--html", page])).code).toBe(0);
    const browser = await launchChromium();
    try {
      const tab = await browser.newPage();
      await tab.goto(`file://${page}`);
      // Read in the page (the test's types have no DOM): each bar as the browser laid it out.
      const bars = JSON.parse(
        await tab.evaluate(`JSON.stringify([...document.querySelectorAll("svg[data-chart] rect")].map((r) => ({
          chart: r.closest("svg").id,
          series: r.getAttribute("data-series"),
          value: Number(r.getAttribute("data-value")),
          width: r.getBoundingClientRect().width,
        })))`),
      ) as Array<{ chart: string; series: string; value: number; width: number }>;
      expect(
        bars
          .filter((b) => b.chart === "failures")
          .map((b) => [b.series, b.value])
          .sort(),
      ).toEqual([
        ["loop", 1],
        ["not_found", 1],
        ["unknown_tool", 1],
        ["wrong_tool", 1],
      ]);
      expect(bars.filter((b) => b.chart === "repairs").map((b) => [b.series, b.value])).toEqual([
        ["field alias", 1],
      ]);
      expect(bars.filter((b) => b.chart === "outcomes").reduce((n, b) => n + b.value, 0)).toBe(3);
      expect(bars.every((b) => b.width > 0)).toBe(true);
      const dir = path.resolve(import.meta.dirname, "../artifacts");
      mkdirSync(dir, { recursive: true });
      const shot = path.join(dir, "stats.png");
      await tab.screenshot({ path: shot, fullPage: true });
      expect(existsSync(shot) && statSync(shot).size).toBeGreaterThan(10_000);
    } finally {
      await browser.close();
    }
  });
});

describe("keel stats and a run that stopped on an error", () => {
  it("counts a run stopped before its first turn, with its request and error", async () => {
    const ws = tempWorkspace();
    const url = `http://127.0.0.1:${await closedPort()}`;
    const run = await runKeel([
      "run",
      "Create a.txt",
      "-w",
      ws,
      "--ollama-url",
      url,
      "--retries",
      "0",
    ]);
    expect(run.code).toBe(3);
    const r = await runKeel(["stats", "-w", ws, "--json"]);
    const stats = JSON.parse(r.stdout) as Stats;
    expect(stats.runs).toBe(1);
    expect(stats.models.map((m) => [m.model, m.outcomes])).toEqual([["unknown", { stopped: 1 }]]);
    expect(stats.stopped).toHaveLength(1);
    expect(stats.stopped[0]!.error).toContain(`cannot reach the Ollama server at ${url}`);
    const text = await runKeel(["stats", "-w", ws]);
    expect(text.stdout).toContain("1 run in 1 thread");
    expect(text.stdout).toMatch(/stopped on an error[^\n]*\n.*cannot reach the Ollama server/);
  });
});

describe("keel stats without a store", () => {
  it("says so and creates nothing", async () => {
    const ws = tempWorkspace();
    const r = await runKeel(["stats", "-w", ws]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no checkpoint store at sqlite:${workspaceState(ws).db}`);
    expect(existsSync(path.join(ws, ".keel"))).toBe(false);
    expect(existsSync(workspaceState(ws).dir)).toBe(false);
  });
});

describe("tool descriptions that learn", () => {
  it("adds a right-vs-wrong line after repeated misuse across threads, seen in the next run's request", async () => {
    const lessonIn = (tools: Array<{ function: { name: string; description?: string } }> = []) =>
      tools.find((t) => t.function.name === "make_dir")?.function.description ?? "";
    const fake = await startFake({
      script: keelScript((req) => {
        const taught = lessonIn(req.body.tools).includes("Learned from earlier runs");
        if (req.turn === 0 && !taught) return calls(call("make_dir", { path: "src/x.js" }));
        if (req.last?.role !== "tool" || req.last.content.startsWith("Error"))
          return calls(call("write_file", { path: "src/x.js", content: "x\n" }));
        return { content: "Wrote src/x.js." };
      }),
    });
    const ws = tempWorkspace();
    const base = ["-w", ws, "--ollama-url", fake.url, "--json"];
    for (const thread of ["t1", "t2", "t3", "t4"]) {
      const r = await runKeel(["run", "Create src/x.js", "--thread", thread, ...base]);
      expect(r.code).toBe(0);
    }
    const bodies = fake.chatBodies({ turnsOnly: true });
    const shown = bodies.map((b) => lessonIn(b.tools).includes("Learned from earlier runs"));
    // runs 1-3 misuse make_dir (3 misuses, 3 threads); only run 4's requests carry the line
    // runs 1-3: make_dir, write_file, answer (3 turns each); run 4: write_file, answer
    expect(shown).toEqual([...Array<boolean>(9).fill(false), true, true]);
    const run4 = bodies.filter((_, i) => shown[i]);
    expect(lessonIn(run4[0]!.tools)).toContain(
      'Learned from earlier runs: Right: make_dir {"path": "src"}. Wrong: make_dir {"path": "src/app.js"}: files are created with write_file.',
    );
    // the line is the same in every request of the run: the prompt's prefix stays cached
    expect(new Set(run4.map((b) => lessonIn(b.tools))).size).toBe(1);

    const stats = JSON.parse((await runKeel(["stats", "-w", ws, "--json"])).stdout) as Stats;
    expect(stats.lessons).toEqual([
      expect.objectContaining({
        model: "qwen3:8b",
        tool: "make_dir",
        key: "make_dir-file",
        status: "active",
        before: { calls: 3, misuses: 3 },
        after: { calls: 0, misuses: 0 },
      }),
    ]);
  });
});
