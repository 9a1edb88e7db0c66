/**
 * A llama-server whose slots share one KV cache (its default): requests in flight together share
 * the context, and when they do not fit, the server fails them all with 500 "Context size has
 * been exceeded." (models/shared-context.ts). keel analyze with two units at once failed every
 * attempt on a real one; now the request that failed so is sent again alone, and the server's
 * requests go one at a time from then on.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { analystRunConfig } from "../../src/analyst/context.js";
import { createAnalystGraph } from "../../src/analyst/graph.js";
import type { AnalystStateValue } from "../../src/analyst/state.js";
import { startFakeOpenAI, type FakeOpenAI } from "../../src/testing/fake-openai/index.js";
import { analystScript } from "../../src/testing/script.js";
import { tempWorkspace } from "../support/harness.js";

const MODEL = "qwen2.5-coder-7b-instruct";
let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** Four units, each filling most of a 4,096-token window: two at once do not fit together. */
function bigUnits(): string {
  const dir = tempWorkspace();
  for (let u = 0; u < 4; u++)
    writeFileSync(
      path.join(dir, `m${u}.ts`),
      Array.from(
        { length: 160 },
        (_, j) => `export function f${u}_${j}(x: number): number { return x * ${j} + ${u}; }`,
      ).join("\n"),
    );
  return dir;
}

async function analyse(slots: number | undefined) {
  const script = analystScript();
  // Replies take a moment, as a model's do: the two requests of a batch are in flight together.
  fake = await startFakeOpenAI({
    server: "llama.cpp",
    models: { [MODEL]: { contextLength: 4096, tools: true } },
    script: async (req) => ({ ...(await script(req)), delayMs: 30 }),
    ...(slots ? { slots } : {}),
  });
  const graph = createAnalystGraph().compile({
    checkpointer: new MemorySaver(),
    store: new InMemoryStore(),
  });
  const config = analystRunConfig(`shared-${slots ?? "default"}`, {
    target: bigUnits(),
    provider: "openai",
    baseUrl: fake.baseUrl,
    model: MODEL,
    concurrency: 2,
    generationBudget: { analyze: 1024 },
    retryBaseMs: 5,
  });
  const state = (await graph.invoke({}, config)) as AnalystStateValue;
  // (streamed, as keel asks llama-server, the refusal is an error event in a 200 answer)
  const refused = fake.requests.filter(
    (q) => q.path === "/v1/chat/completions" && (q.status === 500 || q.streamedError),
  ).length;
  return { state, refused };
}

describe("a llama-server whose slots share one KV cache", () => {
  it("two units that do not fit together: refused together, then one at a time, every unit analysed", async () => {
    const { state, refused } = await analyse(undefined);
    expect(state.analyzed).toBe(4);
    expect(state.failed).toBe(0);
    // both requests of the first batch failed together; each was sent again alone
    expect(refused).toBe(2);
  });
});
