/** The analyst's throughput, largest request and checkpoint size on the generated fixture. */
import { performance } from "node:perf_hooks";
import { realpathSync } from "node:fs";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { analystRunConfig } from "../src/analyst/context.js";
import { createAnalystGraph } from "../src/analyst/graph.js";
import type { AnalystStateValue } from "../src/analyst/state.js";
import { startFakeOllama } from "../src/testing/fake-ollama/index.js";
import { analystScript } from "../src/testing/script.js";
import { generateRepo } from "../test/support/fixture-repo.js";
import { benchTemp } from "./temp.js";

export async function benchAnalyst() {
  const fake = await startFakeOllama({ script: analystScript() });
  const rows: Record<string, Record<string, number>> = {};
  try {
    for (const [label, settings] of [
      ["no model", { model: "none", concurrency: 1 }],
      ["model, concurrency 1", { concurrency: 1 }],
      ["model, concurrency 4", { concurrency: 4 }],
    ] as const) {
      const target = realpathSync(benchTemp("keel-bench-an-"));
      generateRepo(target);
      const graph = createAnalystGraph().compile({
        checkpointer: new MemorySaver(),
        store: new InMemoryStore(),
      });
      const config = analystRunConfig("bench", {
        target,
        ollamaUrl: fake.url,
        contextWindow: 4096,
        ...settings,
      });
      const before = fake.chatRequests().length;
      const t0 = performance.now();
      const state = await graph.invoke({}, config);
      const seconds = (performance.now() - t0) / 1000;
      const sizes: number[] = [];
      for await (const snap of graph.getStateHistory(config)) {
        const v = snap.values as AnalystStateValue;
        if (v.folderCursor === 0 && (v.cursor === 1 || v.cursor === v.total))
          sizes.push(JSON.stringify(v).length);
      }
      rows[label] = {
        units: state.total,
        unitsPerSecond: Math.round(state.total / seconds),
        modelRequests: fake.chatRequests().length - before,
        largestRequestTokens: state.largestRequest,
        contextWindow: 4096,
        checkpointBytesAfterFirstUnit: Math.min(...sizes),
        checkpointBytesAfterLastUnit: Math.max(...sizes),
      };
    }
  } finally {
    await fake.close();
  }
  return rows;
}
