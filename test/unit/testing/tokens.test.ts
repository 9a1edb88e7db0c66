/** The fake servers' tokenizer: densities near a real Qwen2 tokenizer's, heads and tails by tokens. */
import { describe, expect, it } from "vitest";
import { countTokens, cutToTokens, tailToTokens } from "../../../src/testing/tokens.js";
import { chineseLines, PROSE } from "../../support/texts.js";

describe("the fake servers' tokenizer (testing/tokens.ts)", () => {
  it("counts pure texts near the densities a real Qwen2 tokenizer gave (docs/real-servers.md)", () => {
    const cpt = (t: string) => t.length / countTokens(t);
    expect(cpt(chineseLines(450))).toBeGreaterThan(1.4);
    expect(cpt(chineseLines(450))).toBeLessThan(2.0);
    expect(cpt(PROSE.repeat(20))).toBeGreaterThan(4.0);
    expect(cpt(PROSE.repeat(20))).toBeLessThan(5.2);
    expect(countTokens("")).toBe(0);
    // another tokenizer's density for one kind of text (byte fallback: 2 tokens a CJK character)
    const zh = chineseLines(100);
    expect(countTokens(zh, { cjk: 0.5 })).toBeGreaterThan(countTokens(zh) * 3);
  });

  it("keeps a head and a tail by tokens, as Ollama's runner keeps the first four and the newest", () => {
    const text = chineseLines(450);
    const kept = cutToTokens(text, 4) + tailToTokens(text, 2044);
    expect(countTokens(kept)).toBeLessThanOrEqual(2048 + 1);
    expect(countTokens(kept)).toBeGreaterThan(2040);
    expect(kept.endsWith(text.slice(-200))).toBe(true);
  });
});
