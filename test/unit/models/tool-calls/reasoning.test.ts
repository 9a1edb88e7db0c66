// The one list of reasoning markers, through the stream filter, the parser and the history's visible text: one file by design.
/**
 * Reasoning in every dialect of the one list (REASONING_MARKERS): the stream filter never shows it,
 * however the stream is split (markers included); the parser never reads a call inside it and still
 * finds the call after it; the history's visible text drops it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { visibleText } from "../../../../src/coder/nodes/act/reply.js";
import { createStreamFilter } from "../../../../src/session/stream-filter.js";
import { parseToolCalls } from "../../../../src/models/tool-calls/index.js";
import { REASONING_MARKERS, stripReasoning } from "../../../../src/models/tool-calls/reasoning.js";

const SECRET = "SECRET-PLAN";
const BAIT = '<tool_call>{"name": "rm", "arguments": {"path": "/"}}</tool_call>';
const CALL = '<tool_call>{"name": "read_file", "arguments": {"path": "README.md"}}</tool_call>';

/** Everything the filter shows for `text` cut at `points`. */
function shown(text: string, points: number[]): string {
  const f = createStreamFilter();
  const cuts = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  let out = "";
  let at = 0;
  for (const p of [...cuts, text.length]) {
    out += f.push(text.slice(at, p));
    at = p;
  }
  return out + f.end();
}

const dialects = REASONING_MARKERS.map((m) => [m.dialect, m] as const);

describe.each(dialects)("%s reasoning", (_dialect, m) => {
  const answer = `${m.open}${SECRET} ${BAIT}${m.close}The answer is 4.`;

  it("never reaches the screen, however the stream is split", () => {
    expect(shown(answer, [])).toBe("The answer is 4.");
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 10 }), (points) => {
        expect(shown(answer, points)).toBe("The answer is 4.");
      }),
      { numRuns: 200 },
    );
  });

  it("split one character at a time, markers included", () => {
    expect(
      shown(
        answer,
        [...answer].map((_c, i) => i),
      ),
    ).toBe("The answer is 4.");
  });

  it("holds no call, and the call after it is found", () => {
    expect(parseToolCalls(answer).calls).toEqual([]);
    const r = parseToolCalls(`${m.open}${SECRET} ${BAIT}${m.close}Reading it.\n${CALL}`);
    expect(r.calls).toEqual([{ name: "read_file", arguments: { path: "README.md" } }]);
    expect(r.format).toBe("hermes");
  });

  it("unclosed (the reply was cut): still reasoning, no call", () => {
    expect(parseToolCalls(`${m.open}${SECRET} ${BAIT}`).calls).toEqual([]);
    expect(shown(`${m.open}${SECRET} ${BAIT}`, [3])).toBe("");
  });

  it("is not part of the visible answer", () => {
    expect(visibleText(answer)).toBe("The answer is 4.");
    expect(stripReasoning(answer)).toBe("The answer is 4.");
  });
});

describe("reasoning the prompt opened (only the close marker in the reply)", () => {
  it.each(REASONING_MARKERS.filter((m) => m.promptOpens).map((m) => [m.dialect, m] as const))(
    "%s: text before a lone close is reasoning",
    (_d, m) => {
      const text = `${SECRET} ${BAIT}\n${m.close}\n\n${CALL}`;
      const r = parseToolCalls(text);
      expect(r.calls).toEqual([{ name: "read_file", arguments: { path: "README.md" } }]);
      expect(visibleText(`${SECRET}${m.close}The answer is 4.`)).toBe("The answer is 4.");
    },
  );
  it("a close marker after its open is not a lone one", () => {
    expect(visibleText("<think>a</think>B</think>C")).toBe("B</think>C");
  });
});

describe("harmony", () => {
  const reply =
    "<|channel|>analysis<|message|>SECRET-PLAN to be safe<|end|><|start|>assistant<|channel|>final<|message|>The answer is 4.<|return|>";
  it("shows the final channel only, split anywhere", () => {
    expect(shown(reply, [])).toBe("The answer is 4.");
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 10 }), (points) => {
        expect(shown(reply, points)).toBe("The answer is 4.");
      }),
      { numRuns: 200 },
    );
    expect(visibleText(reply)).toBe("The answer is 4.");
  });
  it("a call on the analysis channel is a call, not reasoning", () => {
    const text =
      '<|channel|>analysis to=functions.read_file <|constrain|>json<|message|>{"path": "README.md"}<|call|>';
    expect(parseToolCalls(text).calls).toEqual([
      { name: "read_file", arguments: { path: "README.md" } },
    ]);
    expect(shown(text, [5, 12, 20])).toBe("");
  });
});
