/** The window's calibration: a server's count judged (Ollama's front truncation, dense text), and a refusal read. */
import { describe, expect, it } from "vitest";
import {
  judgePrompt,
  judgeRefusal,
  refusedPrompt,
  unitScales,
} from "../../../../src/coder/history/calibrate.js";
import { TOKEN_CLASSES, emptyProfile, weighProfile } from "../../../../src/guard/token-estimate.js";

/** A profile of `n` estimated tokens of one class. */
const only = (cls: (typeof TOKEN_CLASSES)[number], n: number) => {
  const p = emptyProfile();
  p[TOKEN_CLASSES.indexOf(cls)] = n;
  return p;
};
const one = unitScales();

describe("judgePrompt", () => {
  it("takes a count near half the window, far below the estimate, as Ollama's front truncation", () => {
    const v = judgePrompt(only("word", 6000), 4098, 8192, one);
    expect(v.truncated).toBe(true);
    expect(weighProfile(only("word", 6000), v.scales)).toBeGreaterThan(8192);
  });
  it("takes a count at the window as truncation", () => {
    expect(judgePrompt(only("word", 3000), 8190, 8192, one).truncated).toBe(true);
  });
  it("learns dense text from honest counts, and leaves a prompt without a count alone", () => {
    const v = judgePrompt(only("word", 3000), 4500, 8192, one);
    expect(v.truncated).toBe(false);
    // an under-estimate is learned all the way at once
    expect(weighProfile(only("word", 3000), v.scales)).toBeCloseTo(4500, 0);
    expect(judgePrompt(only("word", 3000), undefined, 8192, one)).toEqual({
      truncated: false,
      scales: one,
    });
  });
  it("does not mistake an honest prompt near half the window for a cut one", () => {
    expect(judgePrompt(only("word", 4000), 4100, 8192, one).truncated).toBe(false);
  });
  it("learns per script class: a CJK-heavy prompt moves the CJK scale, not the prose one", () => {
    const p = only("cjk", 6000);
    p[TOKEN_CLASSES.indexOf("word")] = 600;
    // Qwen2 counts 0.64 tokens per CJK character where keel prices 1: an over-estimate, learned halfway
    const v = judgePrompt(p, Math.round(6000 * 0.64 + 600), 16384, one);
    expect(v.truncated).toBe(false);
    const cjk = v.scales[TOKEN_CLASSES.indexOf("cjk")]!;
    const word = v.scales[TOKEN_CLASSES.indexOf("word")]!;
    expect(cjk).toBeLessThan(0.85);
    expect(cjk).toBeGreaterThan(0.64);
    expect(word).toBeGreaterThan(0.95);
  });
  it("the issue's CJK case: a count at Ollama's keep size for a prompt estimated far above it is a cut", () => {
    // 8,279 tokens of Chinese and prose sent, num_ctx 8192: Ollama evaluated 4,098
    const p = only("cjk", 7000);
    p[TOKEN_CLASSES.indexOf("word")] = 1500;
    expect(judgePrompt(p, 4098, 8192, one).truncated).toBe(true);
  });
  it("reads a server's refusal of an over-long prompt, with its size when named", () => {
    expect(
      refusedPrompt(
        "request (3053 tokens) exceeds the available context size (512 tokens), try increasing it",
      ),
    ).toEqual({ tokens: 3053 });
    expect(
      refusedPrompt(
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens in the messages.",
      ),
    ).toEqual({ tokens: 5000 });
    expect(
      refusedPrompt("the request exceeds the available context size, try increasing it"),
    ).toEqual({});
    expect(refusedPrompt("Unrecognized request argument supplied: stream_options")).toBeUndefined();
    const after = judgeRefusal(only("cjk", 2000), 3053, 2048, one);
    expect(weighProfile(only("cjk", 2000), after)).toBeGreaterThan(3053);
  });
});
