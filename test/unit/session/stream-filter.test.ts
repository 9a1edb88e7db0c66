import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createStreamFilter } from "../../../src/session/stream-filter.js";

/** Feeds text in the given pieces and returns everything shown. */
function shown(pieces: string[]): string {
  const f = createStreamFilter();
  return pieces.map((p) => f.push(p)).join("") + f.end();
}

/** Splits text at the given cut points. */
const cut = (text: string, points: number[]) => {
  const sorted = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let at = 0;
  for (const p of sorted) {
    out.push(text.slice(at, p));
    at = p;
  }
  out.push(text.slice(at));
  return out;
};

const CASES: Array<[string, string]> = [
  ["Plain answer, nothing hidden.", "Plain answer, nothing hidden."],
  [
    'I will create it.\n<tool_call>\n{"name": "write_file", "arguments": {}}\n</tool_call>',
    "I will create it.\n",
  ],
  ["<think>secret plan</think>The answer is 4.", "The answer is 4."],
  ['{"name": "read_file", "parameters": {"path": "a"}}', ""],
  ['Reading.\n[TOOL_CALLS][{"name": "x", "arguments": {}}]', "Reading.\n"],
  ['Let me look.\n[list_dir(path=".")]', "Let me look."],
  ['<|python_tag|>{"name": "x"}', ""],
  ["Use a < b and [1, 2] freely.", "Use a < b and [1, 2] freely."],
];

describe("createStreamFilter", () => {
  it.each(CASES)("%j → %j", (text, expected) => {
    expect(shown([text])).toBe(expected);
  });

  it("gives the same result however the stream is split", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CASES),
        fc.array(fc.nat(400), { maxLength: 12 }),
        ([text, expected], points) => {
          expect(shown(cut(text, points))).toBe(expected);
        },
      ),
    );
  });
});
