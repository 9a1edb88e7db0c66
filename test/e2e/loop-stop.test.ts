/**
 * A reply that falls into a loop is stopped as it streams (guard/repetition.ts `loopingTail`, read
 * by the wire): the server's connection is closed after a few hundred repeats' worth of text, not at
 * the generation budget; the conversation keeps the loop once; the model is told, and the run goes
 * on. Through the keel command (a streamed run), on Ollama's and llama.cpp's fakes, and through a
 * graph invoked from code, where nobody listens to the stream.
 */
import type { TurnUsage } from "../../src/coder/turn-sums.js";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { runConfig, type SettingsInput } from "../../src/coder/context.js";
import { createCoderGraph } from "../../src/coder/graph.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { startFakeOpenAI, type FakeOpenAI } from "../../src/testing/fake-openai/index.js";
import { runKeel } from "../support/cli.js";
import { call, calls, fakeOllamaPerTest, keelScript, tempWorkspace } from "../support/harness.js";

const LOOP = "I will now write the file hello.txt with the greeting. ";
/** 400 repeats: ~22,000 characters, sent in 400 paced pieces as a server generates them. */
const looping = { content: `Let me think.\n${LOOP.repeat(400)}`, pieces: 400, paceMs: 2 };

const script = keelScript((req) => {
  const told = req.messages.some(
    (m) => m.role === "user" && m.content.includes("fell into a loop"),
  );
  if (!told) return looping;
  return req.last?.role === "tool"
    ? { content: "Created hello.txt." }
    : calls(call("write_file", { path: "hello.txt", content: "hello\n" }));
});

/** What the next request showed of the looping turn, and whether the model was told. */
function afterTheLoop(
  bodies: ReadonlyArray<{ messages?: ReadonlyArray<{ role: string; content?: unknown }> }>,
) {
  const text = (m: { content?: unknown }) => (typeof m.content === "string" ? m.content : "");
  const next = bodies.find((b) => b.messages?.some((m) => text(m).includes("fell into a loop")))!;
  const kept = next.messages!.find((m) => m.role === "assistant" && text(m).includes(LOOP.trim()))!;
  return { kept: text(kept) };
}

const startOllama = fakeOllamaPerTest();
let openai: FakeOpenAI | undefined;
afterEach(async () => {
  await openai?.close();
  openai = undefined;
});

describe("a looping reply is stopped as it streams", () => {
  it("Ollama: stopped early, kept once, the model told, the file written", async () => {
    const fake = await startOllama({ script });
    const ws = tempWorkspace();
    const r = await runKeel(["run", "Create hello.txt", "-w", ws, "--ollama-url", fake.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(path.join(ws, "hello.txt"), "utf8")).toBe("hello\n");
    const { kept } = afterTheLoop(fake.chatBodies({ turnsOnly: true }));
    // the text before the loop and the loop's unit once
    expect(kept.split(LOOP.trim()).length - 1).toBe(1);
    expect(kept.length).toBeLessThan(200);
    // the server was stopped: it had sent under a tenth of the reply's 400 pieces
    const left = fake.prefill.map((p) => p.clientLeftAfter).filter((n) => n !== undefined);
    expect(left).toHaveLength(1);
    expect(left[0]).toBeLessThan(40);
    expect(r.stdout).toMatch(/fell into a loop/);
    // the timeline showed the reply as it streamed, and not again as the turn kept it
    expect(r.stdout.match(/│ Let me think\./g)).toHaveLength(1);
  });

  it("a model that loops every time: the report does not print its loop again as a summary", async () => {
    // every reply loops, the summary turn's too (keelScript answers that one itself otherwise)
    const plan = keelScript(() => looping);
    const fake = await startOllama({ script: (req) => (req.structured ? plan(req) : looping) });
    const ws = tempWorkspace();
    const r = await runKeel([
      "run",
      "Create hello.txt",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--json",
    ]);
    expect(r.json).toMatchObject({ status: "gave_up" });
    const summary = String(r.json?.summary);
    expect(summary).toMatch(/^Stopped: /);
    expect(summary).not.toContain("The model's summary");
    // the repeated unit is named once, in why it stopped
    expect(summary.split(LOOP.trim()).length - 1).toBe(1);
  });

  it("llama.cpp: the same on the OpenAI-compatible stream", async () => {
    openai = await startFakeOpenAI({ server: "llama.cpp", script });
    const ws = tempWorkspace();
    const r = await runKeel([
      "run",
      "Create hello.txt",
      "-w",
      ws,
      "--provider",
      "openai",
      "--base-url",
      openai.baseUrl,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(ws, "hello.txt"))).toBe(true);
    const bodies = openai.requests
      .filter((q) => q.path === "/v1/chat/completions")
      .map((q) => q.body as { messages: Array<{ role: string; content?: unknown }> });
    const { kept } = afterTheLoop(bodies);
    expect(kept.split(LOOP.trim()).length - 1).toBe(1);
    // the stopped turn's tokens are shown, as keel's counts
    expect(r.stdout).toMatch(/tokens: prompt ~[\d,]+ · generated ~\d+ \(keel stopped the reply/);
    expect(stoppedAfter(openai)).toEqual([expect.any(Number)]);
    expect(stoppedAfter(openai)[0]).toBeLessThan(40);
  });

  it("llama.cpp, a graph invoked from code: every reply streams all the same, and the loop is stopped", async () => {
    const { ws, state, fake } = await invokeOnLlama(script, "Create hello.txt");
    expect(state.status).toBe("done");
    expect(readFileSync(path.join(ws, "hello.txt"), "utf8")).toBe("hello\n");
    const chats = fake.requests.filter((q) => q.path === "/v1/chat/completions");
    expect(chats.every((q) => (q.body as { stream?: boolean }).stream === true)).toBe(true);
    expect(stoppedAfter(fake)).toEqual([expect.any(Number)]);
    expect(stoppedAfter(fake)[0]).toBeLessThan(40);
    // the server counted nothing of the stopped reply: keel's counts stand in, said to be keel's
    const usage = state.messages
      .filter((m) => m.getType() === "ai")
      .map((m) => (m.response_metadata as { keel_usage?: TurnUsage }).keel_usage);
    const stopped = usage[0]!;
    expect(stopped).toMatchObject({ countedBy: "keel", reusedFrom: "estimate" });
    expect(stopped.generatedTokens).toBeGreaterThan(5);
    expect(stopped.generatedTokens).toBeLessThanOrEqual(stoppedAfter(fake)[0]!);
    expect(stopped.promptTokens).toBeGreaterThan(500);
    expect(usage.slice(1).every((u) => u && u.countedBy === undefined)).toBe(true);
  });
});

describe("a sentence looping under a changing counter", () => {
  const counted = Array.from(
    { length: 400 },
    (_, i) => `Step ${i + 1}: I will now read the file hello.txt again to be sure.\n`,
  ).join("");
  /** 300 rows that differ only in their numbers, streamed as a call's arguments. */
  const seed = Array.from(
    { length: 300 },
    (_, i) => `INSERT INTO users VALUES (${i}, 'User ${i}', 'user${i}@example.com');\n`,
  ).join("");
  const countedScript = keelScript((req) => {
    const told = req.messages.some(
      (m) => m.role === "user" && m.content.includes("fell into a loop"),
    );
    if (!told) return { content: `Let me think.\n${counted}`, pieces: 400, paceMs: 2 };
    if (req.last?.role === "tool") return { content: "Wrote seed.sql." };
    return {
      content: `Writing the seed rows now, ${"one per user. ".repeat(3)}`,
      pieces: 4,
      ...calls(call("write_file", { path: "seed.sql", content: seed })),
    };
  });

  it("is stopped in the prose; the same shape in a call's arguments is written whole", async () => {
    const { ws, state, fake } = await invokeOnLlama(
      countedScript,
      "Create seed.sql with 300 users",
    );
    expect(state.status).toBe("done");
    // the counted loop: stopped at about 6,000 characters, a third of its 400 pieces
    expect(stoppedAfter(fake)).toEqual([expect.any(Number)]);
    expect(stoppedAfter(fake)[0]).toBeLessThan(140);
    // the seed rows: streamed to the end and written whole
    expect(readFileSync(path.join(ws, "seed.sql"), "utf8")).toBe(seed);
    // the conversation keeps the loop once
    const said = lastAssistantTexts(fake);
    expect(said.join("\n").match(/I will now read the file hello\.txt again/g)).toHaveLength(1);
  });
});

describe("a reply that copies keel's tool instructions (prompt mode)", () => {
  /** The system prompt's tool block, from `<tools>` on, as a small model copies it. */
  const toolBlock = (system: string) => system.slice(system.indexOf("<tools>"));
  const echoing = keelScript((req) => {
    const system = req.messages.find((m) => m.role === "system")?.content ?? "";
    const told = req.messages.some(
      (m) => m.role === "user" && m.content.includes("copied keel's tool instructions"),
    );
    if (!told) {
      const block = toolBlock(system);
      // the block three times over: far longer than a loop's unit, as long as a reply can run
      return { content: `To answer:\n${block}\n${block}\n${block}`, pieces: 600, paceMs: 1 };
    }
    if (req.messages.some((m) => m.role !== "system" && m.content.includes("<tool_response")))
      return { content: "Created hello.txt." };
    const args = { path: "hello.txt", content: "hello\n" };
    return {
      content: `<tool_call>\n${JSON.stringify({ name: "write_file", arguments: args })}\n</tool_call>`,
    };
  });

  it("is stopped after a few hundred characters; the model is told what it did; the file written", async () => {
    const { ws, state, fake } = await invokeOnLlama(echoing, "Create hello.txt", {
      toolMode: "prompt",
    });
    expect(state.status).toBe("done");
    expect(readFileSync(path.join(ws, "hello.txt"), "utf8")).toBe("hello\n");
    // the first reply was stopped within its first tenth (600 pieces in all)
    expect(stoppedAfter(fake)).toEqual([expect.any(Number)]);
    expect(stoppedAfter(fake)[0]).toBeLessThan(60);
    // the conversation keeps the copy's first lines only
    const said = lastAssistantTexts(fake);
    expect(said[0]!.length).toBeLessThan(260);
    expect(state.trail.length).toBe(1);
  });

  it("a reply that quotes the project's own AGENTS.md at length is the model's to write", async () => {
    const rules = Array.from({ length: 40 }, (_, i) => `- rule ${i}: keep the code plain`).join(
      "\n",
    );
    const quoting = keelScript((req) =>
      req.messages.some((m) => m.role !== "system" && m.content.includes("<tool_response"))
        ? { content: "Copied." }
        : {
            content: `<tool_call>\n${JSON.stringify({ name: "write_file", arguments: { path: "RULES.md", content: `${rules}\n` } })}\n</tool_call>`,
            pieces: 200,
            paceMs: 1,
          },
    );
    const ws = tempWorkspace();
    writeFileSync(path.join(ws, "AGENTS.md"), `${rules}\n`);
    const { state, fake } = await invokeOnLlama(quoting, "Copy AGENTS.md to RULES.md", {
      toolMode: "prompt",
      workspace: ws,
    });
    expect(state.status).toBe("done");
    expect(readFileSync(path.join(ws, "RULES.md"), "utf8")).toBe(`${rules}\n`);
    expect(stoppedAfter(fake)).toEqual([]);
  });
});

/** The coder graph invoked from code (nobody listens to the stream) on a fresh llama.cpp fake. */
async function invokeOnLlama(
  script: ReturnType<typeof keelScript>,
  request: string,
  settings: Partial<SettingsInput> = {},
) {
  openai = await startFakeOpenAI({ server: "llama.cpp", script });
  const ws = settings.workspace ?? tempWorkspace();
  const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
  const config = runConfig("loop-invoke", {
    provider: "openai",
    baseUrl: openai.baseUrl,
    model: "qwen2.5-coder-7b-instruct",
    workspace: ws,
    retryBaseMs: 5,
    ...settings,
  });
  const state = (await graph.invoke(
    { messages: [new HumanMessage(request)] },
    config,
  )) as CoderStateValue;
  return { ws, state, fake: openai };
}

/** The assistant messages' texts the fake's last chat request carried: what the conversation kept. */
function lastAssistantTexts(f: FakeOpenAI): string[] {
  const chats = f.requests.filter((q) => q.path === "/v1/chat/completions");
  const last = chats.at(-1)!.body as { messages: Array<{ role: string; content?: unknown }> };
  return last.messages
    .filter((m) => m.role === "assistant")
    .map((m) => (typeof m.content === "string" ? m.content : ""));
}

/** For each streamed answer the client stopped reading, the pieces the fake had sent. */
const stoppedAfter = (f: FakeOpenAI) =>
  f.requests.flatMap((q) => (q.clientLeftAfter === undefined ? [] : [q.clientLeftAfter]));
