// keel's corpus over every format's reader (parse.ts, formats.ts) and the stream filter: one file by design.
/**
 * parseToolCalls on keel's own corpus (test/fixtures/tool-call-corpus.ts): every family the
 * auto mode must read, variants, and negatives that must yield no call; and a streamed reply in
 * random chunks parses as the whole text does.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createStreamFilter } from "../../../../src/session/stream-filter.js";
import { FORMATS } from "../../../../src/models/tool-calls/formats.js";
import { argumentsFromText, parseToolCalls } from "../../../../src/models/tool-calls/index.js";
import { CORPUS, CORPUS_SCHEMAS } from "../../../fixtures/tool-call-corpus.js";

describe("the corpus, format auto", () => {
  /** Per family: cases read right, and cases. Printed at the end, as the rate the issue tracks. */
  const tally = new Map<string, [number, number]>();
  afterAll(() => {
    const rows = [...tally].map(([family, [ok, all]]) => ({
      family,
      parsed: `${ok}/${all}`,
      rate: `${((100 * ok) / all).toFixed(1)}%`,
    }));
    const ok = [...tally.values()].reduce((n, [k]) => n + k, 0);
    console.log(`tool-call corpus: ${ok}/${CORPUS.length} read right`);
    console.table(rows);
  });
  it.each(CORPUS.map((c) => [`${c.family}: ${c.label}`, c] as const))("%s", (_label, c) => {
    const r = parseToolCalls(c.text, {
      schemas: CORPUS_SCHEMAS,
      ...(c.toolNames ? { toolNames: c.toolNames } : {}),
    });
    const right =
      JSON.stringify(r.calls.map((x) => [x.name, x.arguments])) === JSON.stringify(c.calls) &&
      (c.calls.length > 0 || r.content.length > 0);
    const [ok, all] = tally.get(c.family) ?? [0, 0];
    tally.set(c.family, [ok + (right ? 1 : 0), all + 1]);
    expect(r.calls.map((x) => [x.name, x.arguments])).toEqual(c.calls);
    if (c.calls.length === 0) expect(r.content.length).toBeGreaterThan(0);
  });
});

describe("streaming", () => {
  it("a reply fed in arbitrary chunks shows the same text as the whole reply, and no call markup", () => {
    fc.assert(
      fc.property(
        // (calls that only count when the offered tools are known are not markup to the filter)
        fc.constantFrom(...CORPUS.filter((c) => c.calls.length > 0 && !c.toolNames)),
        fc.array(fc.nat(), { maxLength: 8 }),
        (c, cuts) => {
          const points = [...new Set(cuts.map((n) => n % (c.text.length + 1)))].sort(
            (a, b) => a - b,
          );
          const whole = createStreamFilter();
          const expected = whole.push(c.text) + whole.end();
          const chunked = createStreamFilter();
          let shown = "";
          let at = 0;
          for (const p of [...points, c.text.length]) {
            shown += chunked.push(c.text.slice(at, p));
            at = p;
          }
          shown += chunked.end();
          expect(shown).toBe(expected);
          // nothing of a call's arguments reaches the screen
          for (const [, args] of c.calls)
            for (const v of Object.values(args))
              if (typeof v === "string" && v.length > 3) expect(shown).not.toContain(v);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("the format records", () => {
  it.each(FORMATS.map((f) => [f.name, f] as const))(
    "%s: its sample parses, by auto and by name, to read_file on README.md",
    (_name, f) => {
      for (const format of ["auto", f.name] as const) {
        const r = parseToolCalls(f.sample, { format });
        expect(r.calls[0]).toEqual({ name: "read_file", arguments: { path: "README.md" } });
      }
    },
  );
  it.each(FORMATS.filter((f) => f.example).map((f) => [f.name, f] as const))(
    "%s: the prompt-mode example parses back to the same call",
    (_name, f) => {
      expect(parseToolCalls(f.example!).calls).toEqual([
        { name: "read_file", arguments: { path: "README.md" } },
      ]);
    },
  );
  it("every opener holds back streamed markup", () => {
    for (const f of FORMATS) {
      const filter = createStreamFilter();
      const shown = filter.push(`Reading.\n${f.sample}`) + filter.end();
      expect(shown, f.name).not.toContain("README.md");
    }
  });
});

describe("arguments that arrive as text (OpenAI-compatible servers)", () => {
  it.each([
    ["JSON", '{"path": "a.txt", "offset": 2}', { path: "a.txt", offset: 2 }],
    [
      "Qwen3-Coder parameters, typed by the schema",
      "<parameter=path>\na.txt\n</parameter>\n<parameter=offset>\n2\n</parameter>",
      { path: "a.txt", offset: 2 },
    ],
    [
      "MiniMax M2 parameters",
      '<parameter name="path">a.txt</parameter><parameter name="limit">1.5</parameter>',
      { path: "a.txt", limit: 1.5 },
    ],
    ["GLM pairs", "<arg_key>path</arg_key><arg_value>a.txt</arg_value>", { path: "a.txt" }],
    [
      "a whole call in the arguments",
      '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>',
      { path: "a.txt" },
    ],
  ])("%s", (_label, text, expected) => {
    expect(argumentsFromText("read_file", text, CORPUS_SCHEMAS)).toEqual(expected);
  });
  it("unreadable text gives nothing, not an invented object", () => {
    expect(argumentsFromText("read_file", "path is a.txt", CORPUS_SCHEMAS)).toBeUndefined();
  });
});
