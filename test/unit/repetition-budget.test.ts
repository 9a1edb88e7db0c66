import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { toPromptHistory } from "../../src/coder/history/prompt-form.js";
import { fitToWindow as fit, type Fitted } from "../../src/coder/history/fit.js";
import { compactTargets } from "../../src/coder/history/record.js";
import { estimateTokens, replyReserve } from "../../src/guard/context-budget.js";

/** A first fit (nothing folded before) with the old positional arguments. */
const fitToWindow = (
  h: BaseMessage[],
  fixed: string,
  window: number,
  findRequest: () => number,
  foldedUpTo = 0,
): Fitted => fit(h, { fixed, window, pinned: () => [findRequest()], foldedUpTo });

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
    expect(fitToWindow(h, "system", 4096, () => 0)).toEqual({ messages: h, foldedUpTo: 0 });
  });

  it("folds the oldest turns into a record, keeping the request and the newest turns, under the budget", () => {
    const h = [request, ...Array.from({ length: 12 }, (_, i) => turn(i, 3000)).flat()];
    const fitted = fitToWindow(h, "system", 4096, () => 0);
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
      const fitted = fitToWindow(h, "system", 16_384, () => 0);
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
      const grown = fitToWindow(all.slice(0, n), "system", 8192, () => 0, folded);
      const fresh = fitToWindow(all.slice(0, n).map(copy), "system", 8192, () => 0, folded);
      expect(grown.messages.map((m) => m.text)).toEqual(fresh.messages.map((m) => m.text));
      expect(grown.compacted).toEqual(fresh.compacted);
      expect(grown.foldedUpTo).toBe(fresh.foldedUpTo);
      folded = grown.foldedUpTo;
    }
    const last = fitToWindow(all, "system", 8192, () => 0).messages[1]!.text;
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
    const fitted = fitToWindow(h, "system", 4096, () => at);
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

describe("compactTargets: the record names what was read in fewer tokens", () => {
  it("writes a numbered run as one range and a folder's files as one group, in the order first seen", () => {
    expect(compactTargets(Array.from({ length: 68 }, (_, i) => `notes/n${i}.txt`))).toEqual([
      "notes/n{0..67}.txt",
    ]);
    expect(
      compactTargets([
        "src/a.ts",
        "README.md",
        "src/b.ts",
        "npm test",
        "src/c/d.ts",
        "f0",
        "f1",
        "f2",
        "f4",
        "logs/007.log",
        "logs/008.log",
        "logs/009.log",
        "TODO|FIXME",
      ]),
    ).toEqual([
      "src/{a.ts,b.ts}",
      "README.md",
      "npm test",
      "src/c/d.ts",
      "f{0..2}",
      "f4",
      // a zero-padded run keeps its zeros in front of the range
      "logs/00{7..9}.log",
      "TODO|FIXME",
    ]);
  });

  it("takes numbers of up to 15 digits (beyond, a number and the next are one float); never hangs", () => {
    const big = [
      "ids/10000000000000000.json",
      "ids/10000000000000001.json",
      "ids/9007199254740992",
    ];
    expect(compactTargets(big)).toEqual([
      "ids/{10000000000000000.json,10000000000000001.json,9007199254740992}",
    ]);
    expect(compactTargets(["r999999999999998", "r999999999999999", "r1000000000000000"])).toEqual([
      "r999999999999998",
      "r999999999999999",
      "r1000000000000000",
    ]);
    expect(compactTargets(["r99999999999998", "r99999999999999", "r100000000000000"])).toEqual([
      "r{99999999999998..100000000000000}",
    ]);
  });

  it("keeps runs shorter than three, and names that only look alike, as they are", () => {
    expect(compactTargets(["a1.ts", "a2.ts", "b3.ts", "a 4", "a 5", "a 6"])).toEqual([
      "a1.ts",
      "a2.ts",
      "b3.ts",
      "a {4..6}",
    ]);
  });
});
