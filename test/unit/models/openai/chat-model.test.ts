/** The figures an OpenAI-compatible server sends beside the reply: usage, timings, the finish reason. */
import { describe, expect, it } from "vitest";
import { noteServerFigures } from "../../../../src/models/openai/chat-model.js";
import type { WireFacts } from "../../../../src/models/wire.js";

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
});
