/**
 * Lists of calls with a bad entry keep their valid calls and report the bad one, as written and
 * why (the model is told: test/graph/tool-channel.test.ts); a list with no valid entry is text
 * with a problem. And GLM's rule for values: JSON unless the schema says string.
 */
import { describe, expect, it } from "vitest";
import { parseToolCalls } from "../../../../src/models/tool-calls/index.js";

const W = '{"location": "Paris"}';

describe("rejected entries", () => {
  it.each([
    [
      "MiniMax M1: a line that is not JSON",
      `<tool_calls>\n{"name": "get_weather", "arguments": ${W}}\n{"name": "get_time", "arguments": {"tz": "CET"\n</tool_calls>`,
      [{ text: '{"name": "get_time", "arguments": {"tz": "CET"', reason: "not valid JSON" }],
    ],
    [
      "Command R: an action without parameters",
      `Action: \`\`\`json\n[{"tool_name": "get_weather", "parameters": ${W}}, {"tool_name": "get_time"}]\n\`\`\``,
      [{ text: '{"tool_name":"get_time"}', reason: 'no "arguments" for get_time' }],
    ],
    [
      "Hermes list: an entry without a name",
      `<tool_call>[{"name": "get_weather", "arguments": ${W}}, {"arguments": {}}]</tool_call>`,
      [{ text: '{"arguments":{}}', reason: 'no "name"' }],
    ],
    [
      "Kimi: a call id without its index",
      `<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>${W}<|tool_call_end|><|tool_call_begin|>get_time<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>`,
      [
        {
          text: "<|tool_call_begin|>get_time<|tool_call_argument_begin|>{}<|tool_call_end|>",
          reason: 'a Kimi call id must be functions.name:index, got "get_time"',
        },
      ],
    ],
    [
      "DeepSeek: a call without its separator",
      `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>${W}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time {}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
      [
        {
          text: "get_time {}",
          reason: "a DeepSeek tool call needs name<｜tool▁sep｜>{JSON arguments}",
        },
      ],
    ],
  ])("%s", (_label, text, rejected) => {
    const r = parseToolCalls(text);
    expect(r.calls).toEqual([{ name: "get_weather", arguments: { location: "Paris" } }]);
    expect(r.rejected).toEqual(rejected);
    expect(r.problem).toBeUndefined();
  });

  it("a list with no valid entry is text, with the problem named", () => {
    const text = '<tool_call>{"name": "get_weather"}</tool_call>';
    const r = parseToolCalls(text);
    expect(r).toMatchObject({ calls: [], content: text, format: "hermes" });
    expect(r.problem).toMatch(/no "arguments" for get_weather/);
    expect(r.rejected).toBeUndefined();
  });

  it("a valid reply has no rejected field", () => {
    expect(parseToolCalls(`<tool_call>{"name": "a", "arguments": {}}</tool_call>`)).toEqual({
      calls: [{ name: "a", arguments: {} }],
      content: "",
      format: "hermes",
    });
  });
});

describe("GLM values", () => {
  const text =
    '<tool_call>f<arg_key>ids</arg_key><arg_value>[1, 2]</arg_value><arg_key>opts</arg_key><arg_value>{"deep": true}</arg_value><arg_key>n</arg_key><arg_value>7</arg_value><arg_key>note</arg_key><arg_value>[draft]</arg_value></tool_call>';
  it("are JSON when the schema says nothing (and text when they are not JSON)", () => {
    expect(parseToolCalls(text).calls[0]!.arguments).toEqual({
      ids: [1, 2],
      opts: { deep: true },
      n: 7,
      note: "[draft]",
    });
  });
  it("stay text when the schema says string, and follow the schema otherwise", () => {
    const schemas = {
      f: {
        properties: {
          ids: { type: "string" },
          opts: { anyOf: [{ type: "object" }, { type: "null" }] },
          n: { type: "string" },
        },
      },
    };
    expect(parseToolCalls(text, { schemas }).calls[0]!.arguments).toEqual({
      ids: "[1, 2]",
      opts: { deep: true },
      n: "7",
      note: "[draft]",
    });
  });
});
