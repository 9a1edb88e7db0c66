/** Environment defaults (KEEL_MODEL, OLLAMA_HOST) work the same for every entry point, not only the CLI. */
import { afterEach, describe, expect, it } from "vitest";
import { settingsFrom } from "../../src/coder/context.js";
import { runAgent } from "../../src/api.js";
import { analystSettingsFrom } from "../../src/analyst/context.js";
import { call, calls, fakeOllamaPerTest, keelScript, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();
const saved = { model: process.env.KEEL_MODEL, host: process.env.OLLAMA_HOST };
afterEach(() => {
  if (saved.model === undefined) delete process.env.KEEL_MODEL;
  else process.env.KEEL_MODEL = saved.model;
  if (saved.host === undefined) delete process.env.OLLAMA_HOST;
  else process.env.OLLAMA_HOST = saved.host;
});

describe("environment defaults", () => {
  it("runAgent takes the model and server from KEEL_MODEL and OLLAMA_HOST", async () => {
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("write_file", { path: "a.txt", content: "a" }))
          : { content: "Done." },
      ),
    });
    process.env.KEEL_MODEL = "llama3.1:8b";
    process.env.OLLAMA_HOST = fake.url;
    const state = await runAgent("Create a.txt", { workspace: tempWorkspace(), retryBaseMs: 5 });
    expect(state.status).toBe("done");
    expect(fake.chatBodies().length).toBeGreaterThan(0);
    expect(fake.chatBodies().every((b) => b.model === "llama3.1:8b")).toBe(true);
  });

  it("a run's own setting wins over the environment", () => {
    process.env.KEEL_MODEL = "llama3.1:8b";
    expect(settingsFrom({ context: { model: "qwen3:8b" } }).model).toBe("qwen3:8b");
    // Studio / the LangGraph server pass only what the form holds
    expect(settingsFrom({ context: {} }).model).toBe("llama3.1:8b");
    expect(analystSettingsFrom({ context: {} }).model).toBe("llama3.1:8b");
  });
});
