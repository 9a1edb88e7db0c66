import { ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { estimatePrompt } from "../../src/coder/history/fit.js";
import { TOKEN_CLASSES } from "../../src/guard/token-estimate.js";

describe("a message the server counted", () => {
  it("is priced at the server's count, untouched by the calibration", () => {
    const text = "你好".repeat(3000);
    const counted = new ToolMessage({
      content: text,
      tool_call_id: "c1",
      response_metadata: { keel_tokens: 4000 },
    });
    const estimated = new ToolMessage({ content: text, tool_call_id: "c1" });
    const double = TOKEN_CLASSES.map(() => 2);
    expect(estimatePrompt("", [counted], double) - estimatePrompt("", [], double)).toBe(
      4000 + 8 * 2,
    );
    expect(
      estimatePrompt("", [estimated], double) - estimatePrompt("", [], double),
    ).toBeGreaterThan(12000);
  });
});
