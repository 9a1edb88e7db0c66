/**
 * A malformed block never becomes a call (issue 45): the XML-style formats — Qwen3-Coder (and
 * Seed-OSS), MiniMax M2, DeepSeek's DSML, MiniCPM5, GLM — are read as their chat templates write
 * them or not at all. Each kind of malformation (tags unclosed or mismatched, a parameter outside
 * its function, no name, text between the tags, a parameter twice, a block cut short or opened
 * twice) stays text; the well-formed block beside each is read.
 */
import { describe, expect, it } from "vitest";
import { parseToolCalls } from "../../../../src/models/tool-calls/index.js";

/** Qwen3-Coder's block, as its template writes it: `<tool_call>`, the function, its parameters. */
const block = (inner: string, open = "<tool_call>\n", close = "\n</tool_call>") =>
  `${open}${inner}${close}`;
const fn = (params: string, name = "read_file") => `<function=${name}>\n${params}</function>`;
const param = (k: string, v: string) => `<parameter=${k}>\n${v}\n</parameter>\n`;

const QWEN_MALFORMED: Record<string, string> = {
  "<tool_call> never closed": block(fn(param("path", "a")), "<tool_call>\n", ""),
  "</function> missing": block(`<function=read_file>\n${param("path", "a")}`),
  "</parameter> missing": block(fn("<parameter=path>\na\n")),
  "closed by </tool_calls>": block(fn(param("path", "a")), "<tool_call>\n", "\n</tool_calls>"),
  "a parameter before the function": block(param("path", "x") + fn(param("path", "a"))),
  "a parameter after the function": block(`${fn(param("path", "a"))}\n${param("x", "1")}`),
  "text before the function": block(`Sure.\n${fn(param("path", "a"))}`),
  "text after the function": block(`${fn(param("path", "a"))}\nDone.`),
  "text between the parameters": block(fn(`${param("path", "a")}and\n${param("limit", "3")}`)),
  "a function named with two words": block(fn(param("path", "a"), "read file")),
  "a parameter with no name": block(fn("<parameter=>\na\n</parameter>\n")),
  "a parameter given twice": block(fn(param("path", "a") + param("path", "b"))),
  "cut inside a value": "<tool_call>\n<function=read_file>\n<parameter=path>\nREA",
  "two functions in one block": block(`${fn(param("path", "a"))}\n${fn(param("path", "b"))}`),
  "</tool_call> with no <tool_call>": block(fn(param("path", "a")), "", "\n</tool_call>"),
  "a block inside a block": block(block(fn(param("path", "a")))),
  "<seed:tool_call> closed by </tool_call>": block(fn(param("path", "a")), "<seed:tool_call>\n"),
};

const mm = (invokes: string, close = "</minimax:tool_call>") =>
  `<minimax:tool_call>\n${invokes}\n${close}`;
const invoke = (params: string, name = "read_file") =>
  `<invoke name="${name}">\n${params}</invoke>`;
const mp = (k: string, v: string) => `<parameter name="${k}">${v}</parameter>\n`;
const dsml = (params: string) =>
  `<｜DSML｜function_calls>\n<｜DSML｜invoke name="read_file">\n${params}</｜DSML｜invoke>\n</｜DSML｜function_calls>`;
const dp = (k: string, v: string) =>
  `<｜DSML｜parameter name="${k}" string="true">${v}</｜DSML｜parameter>\n`;
const glm = (body: string, name = "read_file", close = "</tool_call>") =>
  `<tool_call>${name}\n${body}${close}`;
const gp = (k: string, v: string) => `<arg_key>${k}</arg_key>\n<arg_value>${v}</arg_value>\n`;

const OTHERS_MALFORMED: Record<string, string> = {
  "MiniMax: a parameter given twice": mm(invoke(mp("path", "a") + mp("path", "b"))),
  "MiniMax: a parameter outside the invoke": mm(`${mp("path", "a")}${invoke("")}`),
  "MiniMax: text between the tags": mm(invoke(`hello\n${mp("path", "a")}`)),
  "MiniMax: an invoke with no name": mm(invoke(mp("path", "a"), "")),
  "MiniMax: </parameter> missing": mm(invoke('<parameter name="path">a\n')),
  "MiniMax: </invoke> missing": mm(`<invoke name="read_file">\n${mp("path", "a")}`),
  "MiniMax: closed by a mismatched tag": mm(invoke(mp("path", "a")), "</minimax:tool_calls>"),
  "DSML: a parameter given twice": dsml(dp("path", "a") + dp("path", "b")),
  "DSML: text between the tags": dsml(`hi\n${dp("path", "a")}`),
  "MiniCPM5: a parameter given twice":
    '<function name="read_file"><param name="path">a</param><param name="path">b</param></function>',
  "MiniCPM5: a function with no name": '<function name=""><param name="path">a</param></function>',
  "GLM: an argument given twice": glm(gp("path", "a") + gp("path", "b")),
  "GLM: text between the name and the arguments": glm(`hello\n${gp("path", "a")}`),
  "GLM: a value with no key": glm("<arg_value>a</arg_value>\n"),
  "GLM: </arg_value> missing": glm("<arg_key>path</arg_key>\n<arg_value>a\n"),
  "GLM: closed by a mismatched tag": glm(gp("path", "a"), "read_file", "</tool_calls>"),
};

const WELL_FORMED: Record<string, string> = {
  "Qwen3-Coder": block(fn(param("path", "a"))),
  "Qwen3-Coder without its special tokens": fn(param("path", "a")),
  "Seed-OSS": block(fn(param("path", "a")), "<seed:tool_call>\n", "\n</seed:tool_call>"),
  MiniMax: mm(invoke(mp("path", "a"))),
  DSML: dsml(dp("path", "a")),
  MiniCPM5: '<function name="read_file"><param name="path">a</param></function>',
  GLM: glm(gp("path", "a")),
};

describe("a malformed block never becomes a call", () => {
  it.each(Object.entries({ ...QWEN_MALFORMED, ...OTHERS_MALFORMED }))("%s", (_, text) => {
    const r = parseToolCalls(text);
    expect(r.calls).toEqual([]);
    expect(r.content).toBe(text.trim());
  });

  it.each(Object.entries(QWEN_MALFORMED).filter(([k]) => !k.includes("two words")))(
    "Qwen3-Coder, %s: the model is told what is wrong",
    (_, text) => {
      expect(parseToolCalls(text).problem).toMatch(/^<function=[^>]*> must contain only/);
    },
  );

  it.each(Object.entries(WELL_FORMED))("%s, well formed, is read", (_, text) => {
    expect(parseToolCalls(text).calls).toEqual([{ name: "read_file", arguments: { path: "a" } }]);
  });

  it("a call inside a Qwen3-Coder value is not run (the value cannot hold </parameter>)", () => {
    const inner = block(fn(param("path", "secret")));
    const text = block(fn(param("path", "notes.md") + param("content", inner), "write_file"));
    expect(parseToolCalls(text).calls).toEqual([]);
  });
});
