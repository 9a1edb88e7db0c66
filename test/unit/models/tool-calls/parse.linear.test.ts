/**
 * The text tool-call parser is linear in the reply (issue 45): its steps (meter.ts: each reader's
 * pass, each body handed to a reader, each scan for a bracket's or tag's end) are counted, and ten
 * times the reply costs at most about ten times the steps, for every format's calls repeated, cut
 * short, left open, nested, quoted as code or hidden in reasoning. Timings are in the bench
 * (bench/parser-scale.ts); here only counts. At most 64 calls of a reply are returned.
 */
import { describe, expect, it } from "vitest";
import {
  FORMATS,
  MAX_CALLS_PER_REPLY,
  Meter,
  parseToolCalls,
} from "../../../../src/models/tool-calls/index.js";
import { STEPS_PER_CHAR } from "../../../../src/models/tool-calls/meter.js";

/** `unit` repeated to about `size` characters. */
const fill = (unit: string, size: number) =>
  unit.repeat(Math.max(1, Math.round(size / unit.length)));

const call = (i: number) => `{"name": "read_file", "arguments": {"path": "src/f${i}.ts"}}`;

/** Replies of every shape: a function of the size, so each family grows by repeating its unit. */
const FAMILIES: Record<string, (size: number) => string> = {
  ...Object.fromEntries(
    FORMATS.flatMap((f) => [
      [`${f.name}: its calls repeated`, (n: number) => fill(`${f.sample}\n`, n)],
      [
        `${f.name}: its calls cut short`,
        (n: number) => fill(`${f.sample.slice(0, Math.ceil(f.sample.length * 0.7))}\n`, n),
      ],
      ...f.opens.map((o) => [`${f.name}: ${o} left open`, (n: number) => fill(`${o} `, n)]),
    ]),
  ),
  "distinct Hermes calls": (n) =>
    Array.from({ length: Math.round(n / 70) }, (_, i) => `<tool_call>${call(i)}</tool_call>`).join(
      "\n",
    ),
  "one line of <function= without >": (n) => fill("<function=", n),
  "one line of <function name= without >": (n) => fill("<function name=", n),
  "unclosed JSON call objects": (n) => fill('{"name": "read_file", "arguments": {', n),
  "brackets nested deep": (n) =>
    `<tool_call>{"name": "f", "arguments": {"a": ${"[".repeat(n / 2)}${"]".repeat(n / 2)}}}</tool_call>`,
  "brackets opened for ever": (n) => fill("{[", n),
  quotes: (n) => fill('"', n),
  backslashes: (n) => fill("\\", n),
  "think blocks": (n) => fill("<think>x</think>", n),
  "calls in code spans": (n) => fill(`\`<tool_call>${call(1)}</tool_call>\` and `, n),
  "calls in fenced examples": (n) =>
    fill(`\`\`\`\n<tool_call>${call(1)}</tool_call>\n\`\`\`\nThat is how.\n`, n),
  "a call holding another in its string": (n) =>
    `<tool_call>{"name": "write_file", "arguments": {"path": "a.md", "content": ${JSON.stringify(fill(`<tool_call>${call(2)}</tool_call>\n`, n))}}}</tool_call>`,
  "Python lists never closed": (n) => fill('[read_file(path="a.py"), list_dir(path="s\n', n),
  "Gemma calls never closed": (n) => fill("call:read_file{path:<escape>README\n", n),
  "GLM keys never closed": (n) => fill("read_file\n<arg_key>path", n),
  "prose with call objects in it": (n) => fill(`Use ${call(3)} here.\n`, n),
};

function steps(text: string): number {
  const meter = new Meter();
  parseToolCalls(text, { meter });
  return meter.steps;
}

describe("the tool-call parser is linear in the reply", () => {
  it.each(Object.keys(FAMILIES))(
    "%s: ten times the text, at most about ten times the steps",
    (family) => {
      const make = FAMILIES[family]!;
      const small = make(10_000);
      const large = make(100_000);
      const ratio = steps(large) / steps(small);
      expect(ratio, `${family}: ${steps(small)} → ${steps(large)} steps`).toBeLessThanOrEqual(
        (11 * large.length) / small.length / 10,
      );
      // far from the limit at which a reply is given up
      expect(steps(large) / large.length).toBeLessThan(STEPS_PER_CHAR / 4);
    },
  );
});

describe("what the parser reads, kept as it was", () => {
  it("a call in a code span, a fenced example, reasoning or another call's string is not run", () => {
    expect(parseToolCalls(FAMILIES["calls in code spans"]!(10_000)).calls).toEqual([]);
    expect(parseToolCalls(FAMILIES["calls in fenced examples"]!(10_000)).calls).toEqual([]);
    expect(
      parseToolCalls(`<think>${FAMILIES["distinct Hermes calls"]!(10_000)}</think>Done.`).calls,
    ).toEqual([]);
    const nested = parseToolCalls(FAMILIES["a call holding another in its string"]!(10_000));
    expect(nested.calls.map((c) => c.name)).toEqual(["write_file"]);
  });

  it("a 100,000-deep nested argument is read without a crash", () => {
    const r = parseToolCalls(FAMILIES["brackets nested deep"]!(200_000));
    expect(r.calls.length + (r.problem ? 1 : 0)).toBeGreaterThan(0);
  });
});

describe("calls per reply are capped", () => {
  const reply = (n: number) =>
    Array.from({ length: n }, (_, i) => `<tool_call>${call(i)}</tool_call>`).join("\n");

  it(`the first ${MAX_CALLS_PER_REPLY} run; the rest are one entry the model is told of`, () => {
    const r = parseToolCalls(reply(6000));
    expect(r.calls).toHaveLength(MAX_CALLS_PER_REPLY);
    expect(r.calls.at(-1)).toEqual({
      name: "read_file",
      arguments: { path: `src/f${MAX_CALLS_PER_REPLY - 1}.ts` },
    });
    expect(r.rejected).toEqual([
      {
        text: `read_file {"path":"src/f${MAX_CALLS_PER_REPLY}.ts"} and the ${6000 - MAX_CALLS_PER_REPLY - 1} after it`,
        reason: `keel runs at most ${MAX_CALLS_PER_REPLY} tool calls per reply; the reply had 6000`,
        count: 6000 - MAX_CALLS_PER_REPLY,
      },
    ]);
    // all the markup is taken out of the text, run or not
    expect(r.content).toBe("");
  });

  it(`a reply of ${MAX_CALLS_PER_REPLY} calls runs whole`, () => {
    const r = parseToolCalls(reply(MAX_CALLS_PER_REPLY));
    expect(r.calls).toHaveLength(MAX_CALLS_PER_REPLY);
    expect(r.rejected).toBeUndefined();
  });
});
