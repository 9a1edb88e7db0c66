/**
 * fitToWindow: the history folded into a record to fit the window — prefix-stable between folds,
 * kind to a server that shifts its cache, the record the same size however long the thread; and
 * a message the server counted priced at its count.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { unitScales } from "../../../../src/coder/history/calibrate.js";
import { TOKEN_CLASSES } from "../../../../src/guard/token-estimate.js";
import {
  estimatePrompt,
  fitToWindow,
  promptBudget,
  type Fitted,
} from "../../../../src/coder/history/fit.js";
import { toPromptHistory } from "../../../../src/coder/history/prompt-form.js";
import { Slots } from "../../../../src/testing/fake-openai/slots.js";
import { estimateTokens, replyReserve } from "../../../../src/guard/context-budget.js";

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

const one = unitScales();

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

/** A first fit (nothing folded before) with the old positional arguments. */
const firstFit = (
  h: BaseMessage[],
  fixed: string,
  window: number,
  findRequest: () => number,
  foldedUpTo = 0,
): Fitted => fitToWindow(h, { fixed, window, pinned: () => [findRequest()], foldedUpTo });

describe("fitToWindow", () => {
  const turn = (i: number, size: number) => [
    new AIMessage({
      content: "",
      tool_calls: [{ id: `c${i}`, name: "read_file", args: { path: `f${i}` } }],
    }),
    new ToolMessage({ content: "x".repeat(size), tool_call_id: `c${i}`, name: "read_file" }),
  ];
  const request = new HumanMessage("Summarise every file");

  it("leaves a history that fits alone", () => {
    const h = [request, ...turn(1, 100)];
    expect(firstFit(h, "system", 4096, () => 0)).toEqual({ messages: h, foldedUpTo: 0 });
  });

  it("folds the oldest turns into a record, keeping the request and the newest turns, under the budget", () => {
    const h = [request, ...Array.from({ length: 12 }, (_, i) => turn(i, 3000)).flat()];
    const fitted = firstFit(h, "system", 4096, () => 0);
    const budget = 4096 - replyReserve(4096);
    const size =
      fitted.messages.reduce((a, m) => a + estimateTokens(m.text) + 8, 0) +
      estimateTokens("system");
    expect(size).toBeLessThanOrEqual(budget);
    expect(fitted.messages[0]).toBe(request);
    // The record tallies the oldest folded turns and spells out the newer ones, each from its call.
    const record = fitted.messages[1]!.text.split("\n");
    expect(record[0]).toMatch(/^\[keel\] Earlier turns were compacted/);
    // …naming what they read (a numbered run as one range), so the model knows which files it has seen
    expect(record[1]).toMatch(/^- \d+ earlier messages; calls: read_file ×\d+ \(f\{0\.\.\d+\}\)$/);
    expect(record[2]).toMatch(/^- you called read_file\(\{"path":"f\d+"\}\)$/);
    const lastFolded = Number(/f(\d+)/.exec(record.at(-2)!)![1]);
    expect(fitted.messages[2]).toBeInstanceOf(AIMessage);
    expect((fitted.messages[2] as AIMessage).tool_calls![0]!.args).toEqual({
      path: `f${lastFolded + 1}`,
    });
    expect(fitted.messages.at(-1)).toBeInstanceOf(ToolMessage);
    expect((fitted.messages.at(-1) as ToolMessage).tool_call_id).toBe("c11");
    // every kept tool result still follows its call
    for (let i = 0; i < fitted.messages.length; i++) {
      const m = fitted.messages[i]!;
      if (m instanceof ToolMessage) expect(fitted.messages[i - 1]).toBeInstanceOf(AIMessage);
    }
    expect(fitted.compacted!.folded).toBeGreaterThan(0);
  });

  it("keeps the record the same size however long the thread grows", () => {
    const recordOf = (turns: number) => {
      const h = [request, ...Array.from({ length: turns }, (_, i) => turn(i, 400)).flat()];
      const fitted = firstFit(h, "system", 16_384, () => 0);
      const budget = 16_384 - replyReserve(16_384);
      const size = fitted.messages.reduce((a, m) => a + estimateTokens(m.text) + 8, 0);
      expect(size).toBeLessThanOrEqual(budget);
      expect(fitted.messages[0]).toBe(request);
      return fitted.messages[1]!.text;
    };
    const at3000 = recordOf(3000);
    const at6000 = recordOf(6000);
    expect(at6000.split("\n")).toHaveLength(at3000.split("\n").length);
    expect(Math.abs(at6000.length - at3000.length)).toBeLessThan(200);
    expect(at6000.length).toBeLessThan(9000);
    expect(at3000).toMatch(
      /- \d{4} earlier messages; calls: read_file ×\d{4} \(f\{0\.\.\d+\}, and \d{4} more calls\)/,
    );
  });

  it("gives the same answer turn after turn as from scratch (what it keeps between turns is exact)", () => {
    const failing = (i: number) => [
      turn(i, 300)[0]!,
      new ToolMessage({
        content: "no such file",
        tool_call_id: `c${i}`,
        name: "read_file",
        status: "error",
      }),
    ];
    const all = [
      request,
      ...Array.from({ length: 400 }, (_, i) => (i % 7 ? turn(i, 300) : failing(i))).flat(),
    ];
    // The same conversation made of other message objects: nothing kept applies to it.
    const copy = (m: BaseMessage) =>
      ToolMessage.isInstance(m)
        ? new ToolMessage({
            content: m.content,
            tool_call_id: m.tool_call_id,
            name: m.name,
            status: m.status,
          })
        : AIMessage.isInstance(m)
          ? new AIMessage({ content: m.content, tool_calls: m.tool_calls ?? [] })
          : new HumanMessage(m.text);
    let folded = 0;
    for (let n = 101; n <= all.length; n += 37) {
      const grown = firstFit(all.slice(0, n), "system", 8192, () => 0, folded);
      const fresh = firstFit(all.slice(0, n).map(copy), "system", 8192, () => 0, folded);
      expect(grown.messages.map((m) => m.text)).toEqual(fresh.messages.map((m) => m.text));
      expect(grown.compacted).toEqual(fresh.compacted);
      expect(grown.foldedUpTo).toBe(fresh.foldedUpTo);
      folded = grown.foldedUpTo;
    }
    const last = firstFit(all, "system", 8192, () => 0).messages[1]!.text;
    expect(last).toMatch(/calls: read_file ×\d+ \(f\{0\.\.\d+\}.*\); \d+ failed/);
  });

  it("keeps a follow-up request before the record, and names calls in prompt mode", () => {
    const earlier = Array.from({ length: 60 }, (_, i) => turn(i, 300)).flat();
    const followUp = new HumanMessage("Now count the files");
    const h = toPromptHistory([
      request,
      ...earlier,
      followUp,
      ...Array.from({ length: 30 }, (_, i) => turn(100 + i, 300)).flat(),
    ]);
    const at = h.indexOf(followUp);
    const fitted = firstFit(h, "system", 4096, () => at);
    // the pinned request first, then the record: both change only at a fold
    expect(fitted.messages[0]).toBe(followUp);
    expect(fitted.messages[1]!.text).toMatch(/^\[keel\] Earlier turns were compacted/);
    // prompt mode shows calls as text, yet the record still knows what they read
    expect(fitted.messages[1]!.text).toMatch(/calls: read_file ×\d+ \(f\{0\.\.\d+\}/);
    expect(fitted.messages[1]!.text).toMatch(/- you called read_file\(\{"path":"f1\d\d"\}\)/);
    // folded: every message but the request, less those kept (all shown but the record and the request)
    expect(fitted.compacted!.folded).toBe(h.length - 1 - (fitted.messages.length - 2));
  });
});

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
