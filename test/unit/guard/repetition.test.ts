/** Repetition in a reply: a sentence or a reply said again, and a tail that loops while it streams. */
import { describe, expect, it } from "vitest";
import { findRepetition, loopingTail } from "../../../src/guard/repetition.js";

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
