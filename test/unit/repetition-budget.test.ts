import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { toPromptHistory } from "../../src/coder/history/prompt-form.js";
import { fitToWindow as fit, type Fitted } from "../../src/coder/history/fit.js";
import { compactTargets } from "../../src/coder/history/record.js";
import { estimateTokens, replyReserve } from "../../src/guard/context-budget.js";
import { findRepetition, loopingTail } from "../../src/guard/repetition.js";

describe("findRepetition", () => {
  it("finds a sentence repeated within one reply", () => {
    expect(
      findRepetition(
        "I will write the file now. I will write the file now. I will write the file now.",
      ),
    ).toMatch(/same sentence 3 times/);
  });
  it("finds the same reply as before", () => {
    expect(
      findRepetition("Let me check the folder structure first.", [
        "Let me check the folder structure first.",
      ]),
    ).toMatch(/same reply 2 times/);
  });
  it("accepts ordinary answers", () => {
    expect(
      findRepetition("Created src/a.ts. Added a test. Ran the tests: 3 passed."),
    ).toBeUndefined();
    expect(findRepetition("ok", ["ok"])).toBeUndefined();
  });
});

/** A first fit (nothing folded before) with the old positional arguments. */
const fitToWindow = (
  h: BaseMessage[],
  fixed: string,
  window: number,
  findRequest: () => number,
  foldedUpTo = 0,
): Fitted => fit(h, { fixed, window, pinned: () => [findRequest()], foldedUpTo });

describe("loopingTail: a reply stopped while it loops", () => {
  it.each([
    ["a word", `Here is the plan: ${"the ".repeat(300)}`, "the"],
    [
      "a sentence",
      `ok\n${"I will now write the file.\n".repeat(40)}`,
      "I will now write the file.",
    ],
    ["blank space", `done${" ".repeat(1200)}`, ""],
    [
      "three lines in varying order",
      `Sure.\n${Array.from({ length: 90 }, (_, i) => ["<|im_end|>", "<|im_start|>user", "<|im_end|><|im_end|>"][(i * i) % 3]).join("\n")}`,
      "<|im_",
    ],
    [
      "a sentence under a counting number",
      `Plan:\n${Array.from({ length: 60 }, (_, i) => `${i + 2}. Create hello.py that prints hello`).join("\n")}`,
      "61. Create hello.py",
    ],
  ])("%s", (_, text, unit) => {
    const loop = loopingTail(text);
    expect(loop?.unit.trim().startsWith(unit)).toBe(true);
    // what it said before the loop is kept
    expect(text.slice(0, loop!.start).length).toBeLessThan(20);
  });

  it.each([
    [
      "numbered lines",
      Array.from({ length: 120 }, (_, i) => `  const v${i} = compute(${i});`).join("\n"),
    ],
    [
      "similar tests",
      Array.from(
        { length: 40 },
        (_, i) => `def test_${i}():\n    assert f(${i}) == ${i * 2}\n`,
      ).join("\n"),
    ],
    [
      "a list",
      Array.from(
        { length: 60 },
        (_, i) => `- src/module${i}/index.ts: exports ${["parse", "render", "load"][i % 3]}${i}`,
      ).join("\n"),
    ],
    [
      "a table",
      Array.from({ length: 60 }, (_, i) => `| ${i} | ${i * i} | ${i % 2 ? "odd" : "even"} |`).join(
        "\n",
      ),
    ],
    ["a short run", "ha".repeat(300)],
    ["JSON rows", JSON.stringify(Array.from({ length: 80 }, (_, i) => ({ type: "string", i })))],
  ])("not %s", (_, text) => {
    expect(loopingTail(text)).toBeUndefined();
  });
});

describe("loopingTail: prose under a changing counter", () => {
  const counted = (n: number, line: (i: number) => string) =>
    Array.from({ length: n }, (_, i) => line(i)).join("\n");

  it.each([
    [
      "a counter mid-sentence",
      `Sure.\n${counted(120, (i) => `Turn ${i + 3}: I will now read the file hello.txt again to check it.`)}`,
    ],
    [
      "keel's hint echoed with its numbers changing",
      counted(
        120,
        (i) => `You have ${120 - i} turns left and ${i * 7} tokens, so read the next file now.`,
      ),
    ],
    [
      "two sentences taking turns",
      counted(
        200,
        (i) =>
          [`Checking item ${i} of the list now.`, `Item ${i} is done, moving on to the next one.`][
            i % 2
          ]!,
      ),
    ],
    [
      "three sentences going round",
      counted(
        240,
        (i) =>
          [
            `Read file ${i} of the set now.`,
            `File ${i} holds notes about the app.`,
            `The note ${i} says nothing new here.`,
          ][i % 3]!,
      ),
    ],
    [
      "a heading between counted sentences",
      counted(200, (i) =>
        i % 2 ? `I will read notes/n${i}.txt again to be sure of it.` : `### Step ${i / 2}`,
      ),
    ],
    [
      "Chinese under a counter",
      counted(300, (i) => `第${i}步：我现在再读一遍这个文件，确认内容没有问题。`),
    ],
  ])("%s: found in the prose, from where it began", (_, text) => {
    const loop = loopingTail(text, text);
    expect(loop).toBeDefined();
    expect(text.slice(0, loop!.start).length).toBeLessThan(10);
    // not a loop of exact repeats: the prose rule found it
    expect(loopingTail(text)).toBeUndefined();
  });

  const seed = counted(
    200,
    (i) => `INSERT INTO users VALUES (${i}, 'User ${i}', 'user${i}@example.com');`,
  );
  it.each([
    ["seed data in a code fence", `Here is the seed file:\n\`\`\`sql\n${seed}\n\`\`\`\nDone.`],
    [
      "seed data in a fence that opened before the last 16,000 characters",
      `\`\`\`sql\n${seed}\n${seed}`,
    ],
    ["seed data pasted without a fence", seed],
    [
      "a call written as text",
      `<tool_call>\n{"name": "write_file", "arguments": {"path": "seed.sql", "content": "\n${seed}\n"}}\n</tool_call>`,
    ],
    ["a table", counted(200, (i) => `| ${i} | ${i * i} | ${i % 2 ? "odd" : "even"} |`)],
    ["a list of paths", counted(200, (i) => `- notes/n${i}.txt: 40 lines`)],
    [
      "a summary of 40 generated files, a line each",
      counted(40, (i) => `- notes/n${i}.txt defines 24 computed values, from value${i}_0 on.`),
    ],
    [
      "a short counted stretch",
      `Sure.\n${counted(30, (i) => `Turn ${i}: I will now read the file hello.txt again.`)}`,
    ],
  ])("not %s", (_, text) => {
    expect(loopingTail(text, text)).toBeUndefined();
  });

  it("call arguments are not prose: seed data streamed as a call is not a loop", () => {
    const args = JSON.stringify({ path: "seed.sql", content: seed });
    expect(loopingTail(`I will write it.${args}`, "I will write it.")).toBeUndefined();
  });
});

describe("loopingTail: long units and data", () => {
  it("a paragraph of 300 characters, repeated: found at 4 repeats", () => {
    const para =
      "Wait, the user asked me to fix the failing test in src/app.ts, so I should read the file first and then look at the test again. But I already read it, and the error said the value was undefined, so maybe the import is wrong. Let me check the import once more before I change anything. ";
    expect(para.length).toBeGreaterThan(200);
    const text = `<think>\n${para.repeat(8)}`;
    const loop = loopingTail(text);
    expect(loop?.unit).toHaveLength(para.length);
    expect(loopingTail(para.repeat(3))).toBeUndefined();
  });

  it.each([
    ["a tile map", `const map = [\n${"  [1, 0, 0, 0, 0, 0, 0, 0, 0, 1],\n".repeat(60)}];`],
    ["a framebuffer", `{ ${"0x00, ".repeat(400)}}`],
    ["an empty frame in a mock-up", `┌${"─".repeat(40)}┐\n${`│${" ".repeat(40)}│\n`.repeat(40)}`],
  ])("not %s", (_, text) => {
    expect(loopingTail(text, text)).toBeUndefined();
  });
});

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
