/** A turn's reused tokens: the server's count where it reports one, else keel's estimate (marked). */
import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { serverCounts } from "../../../../src/models/reply-facts.js";
import { usageOf } from "../../../../src/coder/turn/usage.js";

describe("the server's cache figures", () => {
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
