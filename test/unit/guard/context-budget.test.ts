/** What a tool result may take of the window: clipped by tokens, not only by characters. */
import { describe, expect, it } from "vitest";
import { clipResult, toolResultTokens } from "../../../src/guard/context-budget.js";
import { estimateTokens } from "../../../src/guard/token-estimate.js";
import { chineseLines, PROSE } from "../../support/texts.js";

describe("clipResult", () => {
  it("a tool result of dense text is clipped by tokens, not only by characters", () => {
    const zh = chineseLines(450);
    const clipped = clipResult(zh, 8192);
    expect(estimateTokens(clipped)).toBeLessThanOrEqual(toolResultTokens(8192));
    expect(clipped).toContain("keel cut");
    expect(clipped.startsWith(zh.slice(0, 100))).toBe(true);
    expect(clipped.endsWith(zh.slice(-100))).toBe(true);
    // English of the same length keeps its whole character allowance
    const en = PROSE.repeat(40).slice(0, 8000);
    expect(clipResult(en, 8192)).toBe(en);
  });
});
