/** The analyst graph in-process against the fake server, on a generated codebase of 320 files. */
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { beforeAll, describe, expect, it } from "vitest";
import { analystRunConfig, type AnalystSettingsInput } from "../../src/analyst/context.js";
import { createAnalystGraph } from "../../src/analyst/graph.js";
import type { AnalysisReport } from "../../src/analyst/report.js";
import type { AnalystStateValue } from "../../src/analyst/state.js";
import type { ChatBody, FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { analystScript } from "../../src/testing/script.js";
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

/** A fresh copy of the fixture. */
function copy(): string {
  const dir = tempWorkspace("keel-an-");
  cpSync(base, dir, { recursive: true });
  return dir;
}

async function analyse(
  target: string,
  settings: Partial<AnalystSettingsInput>,
  store = new InMemoryStore(),
  checkpointer = new MemorySaver(),
  thread = "t",
) {
  const graph = createAnalystGraph().compile({ checkpointer, store });
  const config = analystRunConfig(thread, {
    target,
    ollamaUrl: fake?.url ?? "http://127.0.0.1:9",
    retryBaseMs: 5,
    ...settings,
  });
  const state = await graph.invoke({}, config);
  const report = JSON.parse(readFileSync(state.jsonPath!, "utf8")) as AnalysisReport;
  return { state, report, store, checkpointer, graph, config };
}

const unitPath = (b: ChatBody) =>
  /<unit path="([^"]+)"/.exec(b.messages!.map((m) => m.content).join("\n"))?.[1];
const folderPath = (b: ChatBody) =>
  /<folder path="([^"]+)"/.exec(b.messages!.map((m) => m.content).join("\n"))?.[1];

describe("analyst", () => {
  it("enumerates deterministically: .gitignore, vendored, generated and binary files are skipped", async () => {
    const { report } = await analyse(copy(), { model: "none" });
    expect(report.units.map((u) => u.path)).toEqual(info.units);
    expect(report.totals.files).toBe(320);
    expect(report.skipped).toMatchObject({ ignored: 2, vendored: 3, generated: 2, binary: 1 });
  });

  it("without a model writes the structural report and says so", async () => {
    const { report, state } = await analyse(copy(), { model: "none" });
    const md = readFileSync(state.reportPath!, "utf8");
    expect(md).toContain("**No model was used.**");
    expect(report.model).toBeNull();
    expect(report.importGraph.length).toBeGreaterThan(10);
    expect(report.hotspots.largest[0]).toEqual({ path: info.large, lines: 1500 });
    expect(report.units.find((u) => u.path === "src/api/sub0/m8.ts")!.internalImports).toEqual([
      "src/search/sub0/m7.ts",
    ]);
  });

  it("falls back to the structural report when Ollama cannot be reached", async () => {
    const { state } = await analyse(copy(), { model: "qwen3:8b", ollamaUrl: "http://127.0.0.1:9" });
    expect(state.modelMode).toBe("none");
    expect(state.noModelReason).toMatch(
      /cannot reach the Ollama server at http:\/\/127\.0\.0\.1:9/,
    );
  });

  it("analyses every unit once, every folder once, within the budget; re-runs reuse all but what changed", async () => {
    fake = await startFake({ script: analystScript() });
    const target = copy();
    const store = new InMemoryStore();
    const first = await analyse(target, { contextWindow: 2048 }, store);
    expect(first.report.units.every((u) => u.purpose?.startsWith("Scripted finding"))).toBe(true);
    expect(first.report.synthesis?.summary).toBe("Scripted synthesis.");
    const bodies = fake.chatBodies();
    const perUnit = new Map<string, number>();
    for (const b of bodies) {
      const p = unitPath(b);
      if (p) perUnit.set(p, (perUnit.get(p) ?? 0) + 1);
    }
    expect([...perUnit.keys()].sort()).toEqual(info.units);
    expect([...perUnit].filter(([p, n]) => p !== info.large && n !== 1)).toEqual([]);
    expect(perUnit.get(info.large)).toBeGreaterThan(1);
    expect(bodies.filter((b) => folderPath(b)).length).toBe(first.state.folderTotal);
    for (const b of bodies) {
      const chars =
        b.messages!.reduce((a, m) => a + m.content.length, 0) + JSON.stringify(b.format).length;
      expect(chars / 3.5).toBeLessThanOrEqual(2048);
      expect(b.options?.num_ctx).toBe(2048);
    }
    expect(first.state.largestRequest).toBeLessThanOrEqual(2048);
    // the largest request is the server's own count of the prompts it was sent (prompt_eval_count)
    expect(first.state.largestRequest).toBe(Math.max(...fake.prefill.map((r) => r.promptTokens)));

    // change two files, re-run: model calls for those two, the folders above them, and the report.
    writeFileSync(path.join(target, "src/api/sub0/m0.ts"), "export const value0 = 42;\n");
    writeFileSync(path.join(target, "py/helpers_1.py"), "def helper_1():\n    return 'changed'\n");
    const before = fake.chatRequests().length;
    const second = await analyse(target, { contextWindow: 2048 }, store, new MemorySaver(), "t2");
    const again = fake.chatBodies().slice(before);
    expect(again.map(unitPath).filter(Boolean).sort()).toEqual([
      "py/helpers_1.py",
      "src/api/sub0/m0.ts",
    ]);
    expect(again.map(folderPath).filter(Boolean).sort()).toEqual([
      ".",
      "py",
      "src",
      "src/api",
      "src/api/sub0",
    ]);
    expect(again.filter((b) => JSON.stringify(b.format).includes("architecture"))).toHaveLength(1);
    expect(second.state).toMatchObject({ analyzed: 2, reused: 318, foldersAnalyzed: 5 });
    expect(second.report.units.find((u) => u.path === "src/api/sub0/m0.ts")!.lines).toBe(1);
  });

  it("gives the same report at any concurrency", async () => {
    fake = await startFake({ script: analystScript() });
    const one = await analyse(copy(), { concurrency: 1 });
    const four = await analyse(copy(), { concurrency: 4 });
    expect({ ...four.report, name: "x" }).toEqual({ ...one.report, name: "x" });
  });

  it("keeps the checkpoint the same size however many units are done", async () => {
    const { graph, config } = await analyse(copy(), { model: "none", concurrency: 1 });
    const sizes: Array<{ cursor: number; bytes: number }> = [];
    for await (const snap of graph.getStateHistory(config as never)) {
      const v = snap.values as AnalystStateValue;
      if (snap.metadata?.source === "loop" && v.folderCursor === 0)
        sizes.push({ cursor: v.cursor, bytes: JSON.stringify(v).length });
    }
    // without a model a step takes a batch of units: the first checkpoint after units were done
    const afterFirst = sizes.filter((s) => s.cursor > 0).sort((a, b) => a.cursor - b.cursor)[0]!;
    expect(afterFirst.cursor).toBeLessThan(320);
    const afterLast = sizes.find((s) => s.cursor === 320)!.bytes;
    expect(Math.abs(afterLast - afterFirst.bytes)).toBeLessThan(64);
  });
});

describe("analyst on a server that holds less than keel estimated", () => {
  it("a part refused as over the context is halved and asked again: every unit analysed", async () => {
    // The server's tokenizer makes a token of every 1.5 characters, far denser than keel's
    // estimate: parts cut for a 6K context come to more than that, and are refused (keel asks
    // Ollama not to truncate).
    fake = await startFake({
      script: analystScript(),
      models: {
        "qwen3:8b": {
          contextLength: 6144,
          capabilities: ["completion", "tools"],
          charsPerToken: 1.5,
        },
      },
    });
    const { state, report } = await analyse(copy(), { contextWindow: 6144, concurrency: 1 });
    const chats = fake.requests
      .filter((r) => r.path === "/api/chat")
      .map((r) => r.body as ChatBody);
    expect(chats.every((b) => b.truncate === false)).toBe(true);
    // Refused parts were asked again in halves: every answered prompt fit the model's context.
    expect(fake.prefill.every((p) => !p.truncated && p.promptTokens <= 6144)).toBe(true);
    expect(chats.length).toBeGreaterThan(fake.prefill.length);
    expect(state.failed ?? 0).toBe(0);
    expect(report.units.every((u) => u.purpose && !u.failed)).toBe(true);
    expect(report.units.find((u) => u.path === info.large)?.purpose).toBeDefined();
  });
});

describe("analyst budgets that fit the window", () => {
  it("every request's generation budget is at most what the 4,096-token window leaves after its prompt", async () => {
    fake = await startFake({ script: analystScript() });
    const dir = tempWorkspace("keel-an-fit-");
    // Files long enough that each part fills the analyst's room for text.
    for (let i = 0; i < 3; i++)
      writeFileSync(
        path.join(dir, `big${i}.ts`),
        Array.from({ length: 900 }, (_, k) => `export const value${i}_${k} = ${k};\n`).join(""),
      );
    const { state } = await analyse(dir, { contextWindow: 4096, concurrency: 1 });
    expect(state.failed ?? 0).toBe(0);
    const budgets = fake.requests
      .filter((r) => r.path === "/api/chat")
      .map((r) => Number((r.body as ChatBody).options?.num_predict));
    expect(budgets).toHaveLength(fake.prefill.length);
    // the parts fill the window: without a fitted budget the analyze budget (2,048) would not fit
    expect(Math.max(...fake.prefill.map((p) => p.promptTokens))).toBeGreaterThan(4096 - 2048);
    for (const [i, p] of fake.prefill.entries()) {
      expect(p.numCtx).toBe(4096);
      expect(budgets[i]).toBeLessThanOrEqual(4096 - p.promptTokens);
    }
  });
});
