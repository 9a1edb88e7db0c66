/**
 * The model edge's pure parts: generation budgets and cut replies, the server's cache figures,
 * a rejected request argument, llama-server's slots, arguments encoded twice.
 */
import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { keptRaw, serverCounts } from "../../src/models/reply-facts.js";
import { usageOf } from "../../src/coder/turn/usage.js";
import { cutAtBudget, describeCut, GenerationBudgetSchema } from "../../src/models/budget.js";
import { noteServerFigures } from "../../src/models/openai/chat-model.js";
import {
  argumentToDrop,
  rejectedArgument,
  withoutArguments,
} from "../../src/models/openai/rejected.js";
import { slotWindow } from "../../src/models/openai/slots.js";
import { argumentsFromText } from "../../src/models/tool-calls/parse.js";
import type { WireFacts } from "../../src/models/wire.js";

describe("generation budget", () => {
  it("defaults per call kind; a setting overrides one kind and keeps the others", () => {
    expect(GenerationBudgetSchema.parse(undefined)).toEqual({
      classify: 256,
      plan: 1024,
      act: 8192,
      summary: 1024,
      analyze: 2048,
    });
    expect(GenerationBudgetSchema.parse({ act: 3000 })).toMatchObject({ act: 3000, plan: 1024 });
    expect(() => GenerationBudgetSchema.parse({ act: 0 })).toThrow();
  });

  it("a reply cut by the length limit, on either API", () => {
    expect(
      cutAtBudget(new AIMessage({ content: "", response_metadata: { finish_reason: "length" } })),
    ).toBe(true);
    expect(
      cutAtBudget(new AIMessage({ content: "", response_metadata: { done_reason: "length" } })),
    ).toBe(true);
    expect(
      cutAtBudget(
        new AIMessage({ content: "", response_metadata: { finish_reason: "tool_calls" } }),
      ),
    ).toBe(false);
  });

  it("names the call that was cut: the server's raw call, one the wire kept as text, or text", () => {
    const openai = new AIMessage({
      content: "",
      additional_kwargs: {
        tool_calls: [
          { id: "c1", type: "function", function: { name: "write_file", arguments: "{" } },
        ],
      },
    });
    expect(describeCut(openai, 512)).toBe(
      "your reply was cut at the generation budget of 512 tokens while writing a call to write_file (1 characters of arguments arrived); nothing in it was run",
    );
    // Ollama's string arguments, kept by the wire (ChatOllama would drop the call): their length
    const ollama = new AIMessage({
      content: "",
      tool_calls: [{ id: "c2", name: "edit_file", args: keptRaw(`{"path": "${"x".repeat(30)}`) }],
    });
    expect(describeCut(ollama, 8192)).toMatch(/while writing a call to edit_file \(40 characters/);
    expect(describeCut(new AIMessage({ content: '<tool_call>\n{"name": "write' }), 64)).toMatch(
      /while writing a tool call as text/,
    );
    expect(describeCut(new AIMessage({ content: "The answer is" }), 64)).toMatch(/mid-answer/);
  });
});

describe("the server's cache figures", () => {
  it("llama.cpp's usage chunk and timings, streamed or whole", () => {
    const seen: WireFacts = {};
    noteServerFigures(
      'data: {"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":1100}},"timings":{"cache_n":1100,"prompt_n":100}}',
      seen,
    );
    expect(seen).toEqual({ cachedTokens: 1100, evaluatedTokens: 100 });
    const only: WireFacts = {};
    noteServerFigures(
      '{"choices":[{"finish_reason":"stop"}],"timings":{"cache_n":30,"prompt_n":70}}',
      only,
    );
    expect(only).toEqual({ cachedTokens: 30, evaluatedTokens: 70, finishReason: "stop" });
    // A streamed reply's finish reason, which the client drops from the message it builds.
    const cut: WireFacts = {};
    noteServerFigures('data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}', cut);
    expect(cut).toEqual({ finishReason: "length" });
    const none: WireFacts = {};
    noteServerFigures('data: {"choices":[{"delta":{"content":"cached_tokens"}}]', none);
    expect(none).toEqual({});
  });

  it("reused tokens: the server's count where reported, else the estimate (marked)", () => {
    const reply = new AIMessage({ content: "ok", response_metadata: {} });
    reply.usage_metadata = { input_tokens: 1000, output_tokens: 5, total_tokens: 1005 };
    expect(usageOf(serverCounts(reply, { cachedTokens: 900 }), 0.5).usage).toMatchObject({
      promptTokens: 1000,
      reusedTokens: 900,
      newTokens: 100,
      reusedFrom: "server",
    });
    expect(usageOf(serverCounts(reply, {}), 0.5).usage).toMatchObject({
      reusedTokens: 500,
      reusedFrom: "estimate",
    });
    // Timings without usage still give the prompt's size.
    const bare = new AIMessage({ content: "ok", response_metadata: {} });
    expect(serverCounts(bare, { cachedTokens: 40, evaluatedTokens: 60 })).toMatchObject({
      prompt: 100,
      cached: 40,
    });
  });
});

describe("a rejected request argument", () => {
  it.each([
    ["Unrecognized request argument supplied: stream_options", "stream_options"],
    ["Unrecognized request arguments supplied: parallel_tool_calls", "parallel_tool_calls"],
    [
      `{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'tool_choice'), 'msg': 'Extra inputs are not permitted', 'input': 'auto'}]"}`,
      "tool_choice",
    ],
    [
      '{"detail":[{"type":"extra_forbidden","loc":["body","max_tokens"],"msg":"Extra inputs are not permitted"}]}',
      "max_tokens",
    ],
    ["Unsupported parameter: 'max_tokens' is not supported with this model.", "max_tokens"],
    [
      "Failed to deserialize the JSON body: unknown field `cache_prompt`, expected one of",
      "cache_prompt",
    ],
    ["request (3053 tokens) exceeds the available context size (512 tokens)", undefined],
  ])("%s → %s", (text, name) => {
    expect(rejectedArgument(text)).toBe(name);
  });

  it("drops only what keel can do without, and only when the request has it", () => {
    const body = { model: "m", messages: [], max_tokens: 10, tools: [] };
    expect(argumentToDrop("Unrecognized request argument supplied: max_tokens", body)).toBe(
      "max_tokens",
    );
    expect(argumentToDrop("Unrecognized request argument supplied: tools", body)).toBeUndefined();
    expect(argumentToDrop("Unrecognized request argument supplied: seed", body)).toBeUndefined();
    expect(withoutArguments({ ...body }, ["max_tokens"])).toEqual({
      model: "m",
      messages: [],
      tools: [],
    });
  });
});

describe("llama-server's slots", () => {
  it("the real window is a slot's", () => {
    expect(slotWindow({ nCtx: 4096, totalSlots: 4 })).toBe(1024);
    expect(slotWindow({ nCtx: 4096, slotCtx: 4096, totalSlots: 4 })).toBe(4096);
    expect(slotWindow({ slotCtx: 4096, totalSlots: 4, slots: [1024, 1024, 1024, 1024] })).toBe(
      1024,
    );
    expect(slotWindow({ nCtx: 8192 })).toBe(8192);
    expect(slotWindow({})).toBeUndefined();
  });
});

describe("arguments encoded twice", () => {
  it("a JSON string holding the object (twice or three times) is the object", () => {
    const args = { path: "a.txt", content: 'say "hi"\n' };
    expect(argumentsFromText("write_file", JSON.stringify(JSON.stringify(args)))).toEqual(args);
    expect(
      argumentsFromText("write_file", JSON.stringify(JSON.stringify(JSON.stringify(args)))),
    ).toEqual(args);
    expect(argumentsFromText("write_file", JSON.stringify(args))).toEqual(args);
  });
});
