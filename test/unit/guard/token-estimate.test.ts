/** keel's script-aware token estimate, against the fake servers' tokenizer (testing/tokens.ts). */
import { describe, expect, it } from "vitest";
import { estimateTokens, headWithin, tailWithin } from "../../../src/guard/token-estimate.js";
import { countTokens } from "../../../src/testing/tokens.js";
import {
  base64Blob,
  chineseLines,
  EMOJI,
  hexBlob,
  minifiedJson,
  mixedText,
  PROSE,
  TYPESCRIPT,
} from "../../support/texts.js";

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
});
