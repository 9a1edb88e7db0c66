import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import {
  judgePrompt,
  judgeRefusal,
  refusedPrompt,
  unitScales,
} from "../../src/coder/history/calibrate.js";
import { TOKEN_CLASSES, emptyProfile, weighProfile } from "../../src/guard/token-estimate.js";
import { estimatePrompt, fitToWindow, promptBudget } from "../../src/coder/history/fit.js";
import { toPromptHistory } from "../../src/coder/history/prompt-form.js";
import { Slots } from "../../src/testing/fake-openai/slots.js";

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

const render = (m: BaseMessage) =>
  `${m.getType()}:${m.text}:${JSON.stringify((m as AIMessage).tool_calls ?? [])}`;

/**
 * Runs `turns` turns through the fitter as act does, carrying the fold point (and the record's
 * place); returns each prompt's text and messages. `shift`: a server that shifts its cache;
 * `prompt`: prompt mode's history.
 */
function simulate(
  turns: number,
  size: number,
  window: number,
  o: { shift?: boolean; prompt?: boolean } = {},
) {
  let history: BaseMessage[] = [request];
  let folded = 0;
  let recordAt: number | undefined;
  const prompts: string[] = [];
  const sent: BaseMessage[][] = [];
  const folds: number[] = [];
  for (let t = 0; t < turns; t++) {
    const fitted = fitToWindow(o.prompt ? toPromptHistory(history) : history, {
      fixed: SYSTEM,
      window,
      pinned: () => [0],
      foldedUpTo: folded,
      ...(recordAt !== undefined ? { recordAt } : {}),
      ...(o.shift ? { shift: true } : {}),
    });
    expect(estimatePrompt(SYSTEM, fitted.messages)).toBeLessThanOrEqual(promptBudget(window));
    if (fitted.compacted) folds.push(t);
    folded = fitted.foldedUpTo;
    recordAt = fitted.recordAt;
    sent.push(fitted.messages);
    prompts.push([SYSTEM, ...fitted.messages.map(render)].join("\n"));
    history = [...history, ...turn(t, size)];
  }
  return { prompts, folds, sent };
}

/** Each prompt's tokens (4 characters each) and those a one-slot llama-server serves from its cache. */
function cacheOf(prompts: string[], reuse: number) {
  const slots = new Slots(1, (t) => Math.ceil(t.length / 4));
  return prompts.map((p) => slots.take(p, reuse));
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
    const { sent } = simulate(80, 900, 8192);
    const last = sent.at(-1)!;
    expect(last[0]!.text).toBe(request.text);
    expect(last[1]!.text).toContain("[keel] Earlier turns");
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

describe("fitToWindow: folds on a server that shifts its cache (n_cache_reuse)", () => {
  it("keeps over half of every folded prompt in the server's cache, where a plain fold keeps the fixed part only", () => {
    const shifted = simulate(120, 900, 8192, { shift: true });
    const plain = simulate(120, 900, 8192);
    const reused = cacheOf(shifted.prompts, 64);
    for (const t of shifted.folds)
      expect(reused[t]!.cachedTokens).toBeGreaterThan(reused[t - 1]!.promptTokens / 2);
    // the same prompts without the server's chunk reuse, and keel's plain folds with it: each fold breaks
    const unshifted = cacheOf(shifted.prompts, 0);
    const plainReused = cacheOf(plain.prompts, 64);
    for (const t of shifted.folds)
      expect(unshifted[t]!.cachedTokens).toBeLessThan(unshifted[t - 1]!.promptTokens / 2);
    for (const t of plain.folds)
      expect(plainReused[t]!.cachedTokens).toBeLessThan(plainReused[t - 1]!.promptTokens / 2);
    // more of all prompt tokens come from the cache than with plain folds
    const share = (r: ReturnType<typeof cacheOf>) =>
      r.reduce((a, x) => a + x.cachedTokens, 0) / r.reduce((a, x) => a + x.promptTokens, 0);
    expect(share(reused)).toBeGreaterThan(share(plainReused));
    // between folds each prompt extends the previous one
    for (let t = 1; t < shifted.prompts.length; t++)
      if (!shifted.folds.includes(t))
        expect(shifted.prompts[t]!.startsWith(shifted.prompts[t - 1]!)).toBe(true);
  });

  it("puts the record after the kept turns, before the newest call and its result (also in prompt mode)", () => {
    for (const prompt of [false, true]) {
      const { sent, folds } = simulate(60, 900, 8192, { shift: true, prompt });
      expect(folds.length).toBeGreaterThan(2);
      for (const t of folds) {
        const messages = sent[t]!;
        const at = messages.findIndex((m) => m.text.startsWith("[keel] Earlier turns"));
        expect(messages[0]!.text).toBe(request.text);
        // kept turns before the record: whole calls with their results
        expect(at).toBeGreaterThan(2);
        expect(messages[1]!.getType()).toBe("ai");
        // then the newest call, then its result, last
        expect(messages[at + 1]!.getType()).toBe("ai");
        expect(messages.length).toBe(at + 3);
      }
    }
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
