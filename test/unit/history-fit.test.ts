import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import {
  judgePrompt,
  judgeRefusal,
  refusedPrompt,
  unitScales,
} from "../../src/agent/history/calibrate.js";
import { TOKEN_CLASSES, emptyProfile, weighProfile } from "../../src/guard/token-estimate.js";
import { estimatePrompt, fitToWindow, promptBudget } from "../../src/agent/history/fit.js";

const request = new HumanMessage("Read every note and summarise them");
const turn = (i: number, size: number): BaseMessage[] => [
  new AIMessage({
    content: "",
    tool_calls: [{ id: `c${i}`, name: "read_file", args: { path: `notes/n${i}.txt` } }],
  }),
  new ToolMessage({
    content: `note ${i} `.repeat(size / 7),
    tool_call_id: `c${i}`,
    name: "read_file",
  }),
];
const SYSTEM = "You are keel. ".repeat(200);

/** Runs `turns` turns through the fitter as act does, carrying the fold point; returns each prompt's text. */
function simulate(turns: number, size: number, window: number) {
  let history: BaseMessage[] = [request];
  let folded = 0;
  const prompts: string[] = [];
  const folds: number[] = [];
  for (let t = 0; t < turns; t++) {
    const fitted = fitToWindow(history, {
      fixed: SYSTEM,
      window,
      pinned: () => [0],
      foldedUpTo: folded,
    });
    expect(estimatePrompt(SYSTEM, fitted.messages)).toBeLessThanOrEqual(promptBudget(window));
    if (fitted.compacted) folds.push(t);
    folded = fitted.foldedUpTo;
    prompts.push(
      fitted.messages
        .map((m) => `${m.getType()}:${m.text}:${JSON.stringify((m as AIMessage).tool_calls ?? [])}`)
        .join("\n"),
    );
    history = [...history, ...turn(t, size)];
  }
  return { prompts, folds };
}

describe("fitToWindow: a prefix-stable prompt", () => {
  it("between folds each prompt extends the previous one; folds are rare and spaced", () => {
    const { prompts, folds } = simulate(120, 900, 8192);
    let extended = 0;
    for (let i = 1; i < prompts.length; i++)
      if (prompts[i]!.startsWith(prompts[i - 1]!)) extended++;
    // every request that is not a fold extends the previous prompt exactly
    expect(extended).toBe(prompts.length - 1 - folds.length);
    expect(folds.length).toBeGreaterThan(1);
    expect(folds.length / prompts.length).toBeLessThanOrEqual(0.1);
    // (each turn's "note 12" costs its digits one token each, as Qwen2 splits them: 7 turns apart)
    for (let i = 1; i < folds.length; i++)
      expect(folds[i]! - folds[i - 1]!).toBeGreaterThanOrEqual(7);
  });

  it("keeps the request first and a record after it across folds", () => {
    const { prompts } = simulate(80, 900, 8192);
    const last = prompts.at(-1)!;
    expect(last.startsWith(`human:${request.text}`)).toBe(true);
    expect(last.split("\n").find((l) => l.includes("[keel] Earlier turns"))).toBeDefined();
  });

  it("a fold point from an earlier turn is kept while the prompt fits", () => {
    const history = [request, ...Array.from({ length: 40 }, (_, i) => turn(i, 900)).flat()];
    const first = fitToWindow(history, {
      fixed: SYSTEM,
      window: 8192,
      pinned: () => [0],
      foldedUpTo: 0,
    });
    expect(first.compacted).toBeDefined();
    const next = fitToWindow([...history, ...turn(40, 900)], {
      fixed: SYSTEM,
      window: 8192,
      pinned: () => [0],
      foldedUpTo: first.foldedUpTo,
    });
    expect(next.compacted).toBeUndefined();
    expect(next.foldedUpTo).toBe(first.foldedUpTo);
    expect(next.messages.slice(0, first.messages.length).map((m) => m.text)).toEqual(
      first.messages.map((m) => m.text),
    );
  });

  it("a calibration scale above 1 (dense text) folds earlier to stay under the real window", () => {
    const history = [request, ...Array.from({ length: 14 }, (_, i) => turn(i, 900)).flat()];
    const plain = fitToWindow(history, {
      fixed: SYSTEM,
      window: 8192,
      pinned: () => [0],
      foldedUpTo: 0,
    });
    const dense = fitToWindow(history, {
      fixed: SYSTEM,
      window: 8192,
      pinned: () => [0],
      foldedUpTo: 0,
      scales: TOKEN_CLASSES.map(() => 1.8),
    });
    expect(plain.compacted).toBeUndefined();
    expect(dense.compacted).toBeDefined();
    expect(estimatePrompt(SYSTEM, dense.messages) * 1.8).toBeLessThanOrEqual(promptBudget(8192));
  });
});

/** A profile of `n` estimated tokens of one class. */
const only = (cls: (typeof TOKEN_CLASSES)[number], n: number) => {
  const p = emptyProfile();
  p[TOKEN_CLASSES.indexOf(cls)] = n;
  return p;
};
const one = unitScales();

describe("fitToWindow: a record that stays put", () => {
  it("between folds the record is the same text when the calibration moves (it is shaped by the window)", () => {
    // enough folded reads that the record cannot name them all: how many it names depends on its size
    const history = [request, ...Array.from({ length: 80 }, (_, i) => turn(i, 900)).flat()];
    const o = { fixed: SYSTEM, window: 8192, pinned: () => [0] };
    const folded = fitToWindow(history, { ...o, foldedUpTo: 0, scales: one.map((x) => x * 1.2) });
    expect(folded.compacted).toBeDefined();
    const next = fitToWindow([...history, ...turn(80, 900)], {
      ...o,
      foldedUpTo: folded.foldedUpTo,
      scales: one.map((x) => x * 1.3),
    });
    expect(next.compacted).toBeUndefined();
    expect(next.messages[1]!.text).toBe(folded.messages[1]!.text);
    expect(folded.messages[1]!.text).toContain("[keel] Earlier turns");
  });
});

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
