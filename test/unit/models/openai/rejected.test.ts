/** A request argument a server rejects: named from its error, and dropped when keel can do without. */
import { describe, expect, it } from "vitest";
import {
  argumentToDrop,
  rejectedArgument,
  withoutArguments,
} from "../../../../src/models/openai/rejected.js";

describe("a rejected request argument", () => {
  it.each([
    ["Unrecognized request argument supplied: stream_options", "stream_options"],
    ["Unrecognized request arguments supplied: parallel_tool_calls", "parallel_tool_calls"],
    [
      `{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'tool_choice'), 'msg': 'Extra inputs are not permitted', 'input': 'auto'}]"}`,
      "tool_choice",
    ],
    [
      '{"detail":[{"type":"extra_forbidden","loc":["body","max_tokens"],"msg":"Extra inputs are not permitted"}]}',
      "max_tokens",
    ],
    ["Unsupported parameter: 'max_tokens' is not supported with this model.", "max_tokens"],
    [
      "Failed to deserialize the JSON body: unknown field `cache_prompt`, expected one of",
      "cache_prompt",
    ],
    ["request (3053 tokens) exceeds the available context size (512 tokens)", undefined],
  ])("%s → %s", (text, name) => {
    expect(rejectedArgument(text)).toBe(name);
  });

  it("drops only what keel can do without, and only when the request has it", () => {
    const body = { model: "m", messages: [], max_tokens: 10, tools: [] };
    expect(argumentToDrop("Unrecognized request argument supplied: max_tokens", body)).toBe(
      "max_tokens",
    );
    expect(argumentToDrop("Unrecognized request argument supplied: tools", body)).toBeUndefined();
    expect(argumentToDrop("Unrecognized request argument supplied: seed", body)).toBeUndefined();
    expect(withoutArguments({ ...body }, ["max_tokens"])).toEqual({
      model: "m",
      messages: [],
      tools: [],
    });
  });
});
