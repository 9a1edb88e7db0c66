/** Property-based tests (fast-check) of the text tool-call parser: it never throws, never invents a call, and never loses a well-formed one. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseToolCalls } from "../../../../src/models/tool-calls/index.js";

const name = fc.stringMatching(/^[a-z][a-z0-9_]{0,15}$/);
const value = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null));
const args = fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), value, { maxKeys: 4 });
/** Prose with no character that can start tool-call markup. */
const prose = fc.string({ maxLength: 60 }).map((s) => s.replace(/[<>[\]{}|`:()=\\"']/g, " "));

const FORMATS: Array<[string, (n: string, a: Record<string, unknown>) => string]> = [
  ["hermes", (n, a) => `<tool_call>\n${JSON.stringify({ name: n, arguments: a })}\n</tool_call>`],
  ["llama3-json", (n, a) => `<|python_tag|>${JSON.stringify({ name: n, parameters: a })}`],
  ["mistral", (n, a) => `[TOOL_CALLS]${JSON.stringify([{ name: n, arguments: a }])}`],
  ["granite", (n, a) => `<|tool_call|>${JSON.stringify([{ name: n, arguments: a }])}`],
  ["phi4-mini", (n, a) => `functools${JSON.stringify([{ name: n, arguments: a }])}`],
  ["functionary", (n, a) => `<function=${n}>${JSON.stringify(a)}</function>`],
  [
    "kimi-k2",
    (n, a) =>
      `<|tool_calls_section_begin|><|tool_call_begin|>functions.${n}:0<|tool_call_argument_begin|>${JSON.stringify(a)}<|tool_call_end|><|tool_calls_section_end|>`,
  ],
  [
    "deepseek",
    (n, a) =>
      `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>${n}<｜tool▁sep｜>${JSON.stringify(a)}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
  ],
  [
    "harmony",
    (n, a) =>
      `<|channel|>commentary to=functions.${n} <|constrain|>json<|message|>${JSON.stringify(a)}<|call|>`,
  ],
];

describe("parseToolCalls properties", () => {
  it("never throws, and every call it returns is named in the text", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 400 }),
        fc.option(fc.array(name, { maxLength: 3 })),
        (text, toolNames) => {
          const r = parseToolCalls(text, toolNames ? { toolNames } : {});
          for (const c of r.calls) {
            expect(text).toContain(c.name);
            if (toolNames) expect(toolNames).toContain(c.name);
            expect(typeof c.arguments).toBe("object");
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("never invents a call in prose", () => {
    fc.assert(
      fc.property(prose, (text) => {
        expect(parseToolCalls(text).calls).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it.each(FORMATS)(
    "never loses a well-formed %s call, whatever prose is around it",
    (_format, render) => {
      fc.assert(
        fc.property(name, args, prose, prose, (n, a, before, after) => {
          const r = parseToolCalls(`${before}\n${render(n, a)}\n${after}`);
          expect(r.calls).toEqual([{ name: n, arguments: a }]);
          expect(r.content).toBe(`${before}\n\n${after}`.trim());
        }),
        { numRuns: 150 },
      );
    },
  );
});
