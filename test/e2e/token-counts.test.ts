/**
 * Never answered from a cut prompt, for every script and kind of text (issue 27 item 1): the model
 * reads a 450-line Chinese file, minified JSON, a base64 blob or mixed text, and the servers count
 * those by script as a real tokenizer does (testing/tokens.ts). Against the fake Ollama
 * (which cuts an over-long prompt's front and answers anyway) and the fake llama.cpp server (which
 * refuses it): the server never receives a prompt over the window, a model that saw a cut prompt
 * never gets its answer used, and the model's calibration is remembered in the store.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TOKEN_CLASSES } from "../../src/guard/token-estimate.js";
import { openPersistence } from "../../src/persistence/open.js";
import { startFakeOpenAI, type FakeOpenAI } from "../../src/testing/fake-openai/index.js";
import type { ChatView, FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { runKeel } from "../support/cli.js";
import { call, calls, fakeOllamaPerTest, keelScript, tempWorkspace } from "../support/harness.js";
import { base64Blob, chineseLines, minifiedJson, mixedText } from "../support/texts.js";

/** 450-line files: Chinese prose, minified JSON records (one a line), a wrapped base64 blob, a mix. */
const FILES: Array<[string, string]> = [
  ["zh.txt", chineseLines(450)],
  ["data.jsonl", Array.from({ length: 450 }, (_, i) => minifiedJson((i % 3) + 1)).join("\n")],
  ["blob.b64", (base64Blob(25_000).match(/.{1,76}/g) ?? []).join("\n")],
  ["mixed.md", [mixedText(), chineseLines(330), minifiedJson(40)].join("\n")],
];
/** The model reads the file in two halves, then its start again. */
const READS = [
  { offset: 1, limit: 225 },
  { offset: 226, limit: 225 },
  { offset: 1, limit: 100 },
];
const REQUEST = (file: string) => `Read ${file} and write its first line into notes.md`;

/**
 * Reads the file (READS, counted by the script itself: folded turns leave the prompt), then writes
 * notes.md; a model that saw a cut prompt writes JUNK.txt instead.
 */
const script = (file: string) => {
  let reads = 0;
  return keelScript((req: ChatView) => {
    if (req.truncated)
      return calls(call("write_file", { path: "JUNK.txt", content: "answered a cut prompt" }));
    if (reads < READS.length) return calls(call("read_file", { path: file, ...READS[reads++] }));
    const wrote = req.messages.some(
      (m) => m.role === "assistant" && JSON.stringify(m.tool_calls ?? []).includes("write_file"),
    );
    if (!wrote) return calls(call("write_file", { path: "notes.md", content: "first line\n" }));
    return { content: "Wrote notes.md." };
  });
};

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

describe("the fake Ollama, counting by script, window 8192", () => {
  for (const [file, text] of FILES) {
    it(`${file}: no prompt over the window, no answer to a cut prompt, the file written`, async () => {
      fake = await startFake({
        models: {
          "qwen2.5:7b": {
            capabilities: ["completion", "tools"],
            family: "qwen2",
            contextLength: 8192,
          },
        },
        script: script(file),
      });
      const ws = tempWorkspace();
      writeFileSync(path.join(ws, file), text);
      const db = `sqlite:${path.join(ws, "keel.db")}`;
      const r = await runKeel([
        "run",
        REQUEST(file),
        "-w",
        ws,
        "--model",
        "qwen2.5:7b",
        "--ollama-url",
        fake.url,
        "--checkpoints",
        db,
        "--json",
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ intent: "build", intent_source: "rules" });
      expect(existsSync(path.join(ws, "JUNK.txt"))).toBe(false);
      expect(readFileSync(path.join(ws, "notes.md"), "utf8")).toBe("first line\n");
      // what the server received: every prompt within the window, none cut
      expect(fake.prefill.length).toBeGreaterThan(0);
      for (const p of fake.prefill) {
        expect(p.numCtx).toBe(8192);
        expect(p.sentTokens).toBeLessThanOrEqual(8192);
        expect(p.truncated).toBe(false);
      }
      expect(r.stderr).not.toMatch(/the server (cut the prompt|refused a prompt)/);
      // the model saw the file's start
      const result = fake
        .chatBodies({ turnsOnly: true })
        .flatMap((b) => b.messages ?? [])
        .find((m) => m.role === "tool");
      expect(result?.content).toContain(text.slice(0, 40));
      // the model's calibration is remembered for the next thread
      const persistence = await openPersistence(db);
      try {
        const item = await persistence.store.get(["keel", "calibration"], "qwen2.5:7b");
        const scales = (item?.value as { scales: Record<string, number> }).scales;
        expect(Object.keys(scales)).toEqual([...TOKEN_CLASSES]);
        if (file === "zh.txt") expect(scales.cjk).toBeLessThan(0.95);
      } finally {
        await persistence.close();
      }
    });
  }
});

describe("a tokenizer denser than keel's prices (byte fallback: 2 tokens per CJK character)", () => {
  it("the model's CJK price is learned upwards from the server's counts; no prompt goes over the window", async () => {
    fake = await startFake({
      models: {
        "llama2-zh:7b": {
          capabilities: ["completion", "tools"],
          family: "llama",
          contextLength: 8192,
          density: { cjk: 0.5 },
        },
      },
      script: script("zh.txt"),
    });
    const ws = tempWorkspace();
    writeFileSync(path.join(ws, "zh.txt"), chineseLines(450));
    const db = `sqlite:${path.join(ws, "keel.db")}`;
    const r = await runKeel([
      "run",
      REQUEST("zh.txt"),
      "-w",
      ws,
      "--model",
      "llama2-zh:7b",
      "--ollama-url",
      fake.url,
      "--checkpoints",
      db,
      "--json",
    ]);
    // keel learns the density from the server's counts before the window is reached
    for (const p of fake.prefill) expect(p.sentTokens).toBeLessThanOrEqual(8192);
    expect(fake.prefill.some((p) => p.truncated)).toBe(false);
    expect(existsSync(path.join(ws, "JUNK.txt"))).toBe(false);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(path.join(ws, "notes.md"), "utf8")).toBe("first line\n");
    const persistence = await openPersistence(db);
    try {
      const item = await persistence.store.get(["keel", "calibration"], "llama2-zh:7b");
      expect((item?.value as { scales: Record<string, number> }).scales.cjk).toBeGreaterThan(1.5);
    } finally {
      await persistence.close();
    }
  });
});

describe("the fake llama.cpp server (refuses a prompt over its context)", () => {
  let started: FakeOpenAI | undefined;
  afterEach(async () => {
    await started?.close();
    started = undefined;
  });
  for (const [file, text] of FILES) {
    it(`${file}: keel never sends a prompt the server must refuse`, async () => {
      const f = (started = await startFakeOpenAI({
        server: "llama.cpp",
        models: { "qwen2.5-7b-instruct": { contextLength: 4096, tools: true } },
        script: script(file),
      }));
      const ws = tempWorkspace();
      writeFileSync(path.join(ws, file), text);
      const r = await runKeel([
        "run",
        REQUEST(file),
        "-w",
        ws,
        "--provider",
        "openai",
        "--base-url",
        f.baseUrl,
        "--model",
        "qwen2.5-7b-instruct",
        "--checkpoints",
        "memory",
        "--json",
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(path.join(ws, "notes.md"), "utf8")).toBe("first line\n");
      // a refusal shows as a refit in the timeline; there was none
      expect(r.stderr).not.toMatch(/the server (cut the prompt|refused a prompt)/);
      const usage = (r.json as { usage: { turns: Array<{ promptTokens: number }> } }).usage;
      expect(usage.turns.length).toBeGreaterThan(0);
      for (const t of usage.turns) expect(t.promptTokens).toBeLessThanOrEqual(4096);
    });
  }
});
