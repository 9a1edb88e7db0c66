/**
 * A structured answer that is not JSON, on an OpenAI-compatible server: the OpenAI client parses a
 * JSON-schema answer itself and throws; keel takes that as the model's answer (repaired once, then
 * none), never as a fault of the server to retry and end the run on.
 */
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createChatModel, loadProvider } from "../../../src/models/chat-model.js";
import { structuredCall } from "../../../src/models/structured.js";
import { startFakeOpenAI, type FakeOpenAI } from "../../../src/testing/fake-openai/index.js";

const servers: FakeOpenAI[] = [];
afterAll(async () => {
  for (const f of servers) await f.close();
});

async function ask(reply: string, maxTokens = 256) {
  const f = await startFakeOpenAI({ server: "llama.cpp", script: () => ({ content: reply }) });
  servers.push(f);
  await loadProvider("openai");
  const model = createChatModel({
    provider: "openai",
    model: "qwen2.5-coder-7b-instruct",
    serverUrl: f.baseUrl,
    ollamaUrl: f.baseUrl,
    temperature: 0,
    requestTimeoutMs: 10_000,
  });
  const policy = { retries: 3, baseMs: 1, maxMs: 2 } as Parameters<typeof structuredCall>[4];
  const answer = await structuredCall(
    model,
    z.object({ finding: z.string() }),
    "Answer in JSON.",
    "What does a.ts do?",
    policy,
    { maxTokens },
  );
  const bodies = f.chatBodies();
  return { answer, bodies, last: JSON.stringify(bodies.at(-1)?.messages ?? []) };
}

describe("a structured answer that is not JSON (OpenAI-compatible server)", () => {
  it("prose: asked once more, then no answer; the server is asked twice, not retried", async () => {
    const r = await ask("Done.");
    expect(r.answer).toBeNull();
    expect(r.bodies).toHaveLength(2);
    expect(r.last).toContain("That answer was not JSON.");
  });

  it("JSON cut at the budget: asked again shorter", async () => {
    const r = await ask(`{"finding": "${"a long finding ".repeat(400)}"}`, 32);
    expect(r.answer).toBeNull();
    expect(r.bodies).toHaveLength(2);
    expect(r.last).toContain("cut at the generation budget of 32 tokens");
  });

  it("JSON of the schema is the answer", async () => {
    const r = await ask('{"finding": "exports the logger"}');
    expect(r.answer).toEqual({ finding: "exports the logger" });
    expect(r.bodies).toHaveLength(1);
  });
});
