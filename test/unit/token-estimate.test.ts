import { describe, expect, it } from "vitest";
import { clipResult, toolResultTokens } from "../../src/guard/context-budget.js";
import { estimateTokens, headWithin, tailWithin } from "../../src/guard/token-estimate.js";
import { countTokens, cutToTokens, tailToTokens } from "../../src/testing/tokens.js";
import {
  base64Blob,
  chineseLines,
  EMOJI,
  hexBlob,
  minifiedJson,
  mixedText,
  PROSE,
  TYPESCRIPT,
} from "../support/texts.js";

const KINDS: Array<[string, string]> = [
  ["Chinese (450 lines)", chineseLines(450)],
  ["minified JSON", minifiedJson(200)],
  ["base64 blob", base64Blob(6000)],
  ["hex blob", hexBlob(3000)],
  ["TypeScript", TYPESCRIPT.repeat(20)],
  ["English prose", PROSE.repeat(20)],
  ["emoji", EMOJI.repeat(30)],
  ["mixed", mixedText()],
];

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

describe("keel's script-aware estimate (guard/token-estimate.ts)", () => {
  for (const [name, text] of KINDS) {
    it(`${name}: never under the tokenizer's count, and not wildly over it`, () => {
      const real = countTokens(text);
      const est = estimateTokens(text);
      expect(est).toBeGreaterThanOrEqual(real);
      // The fakes' tokenizer is fitted to the real Qwen2 counts of prose, code, JSON and CJK; blobs
      // and emoji were not measured on the real server, so keel's margin there is looser.
      expect(est / real).toBeLessThan(/base64|hex|emoji/.test(name) ? 3 : 1.9);
    });
  }

  it("the issue's case: 450 lines of Chinese are not priced as characters ÷ 3.5", () => {
    const text = chineseLines(450);
    const real = countTokens(text);
    expect(Math.ceil(text.length / 3.5)).toBeLessThan(real * 0.6); // what keel estimated before
    expect(estimateTokens(text)).toBeGreaterThanOrEqual(real);
  });

  it("head and tail within a token budget respect the script", () => {
    const zh = chineseLines(100);
    const head = headWithin(zh, 300);
    expect(estimateTokens(head)).toBeLessThanOrEqual(300);
    expect(estimateTokens(zh.slice(0, head.length + 1))).toBeGreaterThan(300);
    expect(estimateTokens(tailWithin(zh, 300))).toBeLessThanOrEqual(300);
    expect(headWithin(PROSE, 1000)).toBe(PROSE);
  });

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
