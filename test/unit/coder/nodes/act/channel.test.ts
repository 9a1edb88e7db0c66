/**
 * readReply: every channel's calls — Ollama's native calls (with string arguments the wire kept as
 * text), an OpenAI-compatible server's (with arguments its client could not parse), and calls
 * written as text in prompt mode — are read and repaired in one pass, in the server's order.
 */
import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { readReply } from "../../../../../src/coder/nodes/act/channel.js";
import { keptRaw } from "../../../../../src/models/reply-facts.js";
import { schemasOf } from "../../../../../src/tools/call-repair.js";
import { ALL_TOOLS } from "../../../../../src/tools/registry.js";

const tools = ALL_TOOLS;
const read = (ai: AIMessage, mode: "native" | "prompt" = "native") =>
  readReply(ai, { mode, format: "hermes", tools, schemas: schemasOf(tools) });

describe("readReply: one pass for every channel", () => {
  const misnamed = { file_path: "a.txt", text: "x" };
  const expected = { name: "write_file", args: { path: "a.txt", content: "x" } };
  const notes = [
    "called write_file for create_file",
    "used file_path as path",
    "used text as content",
  ];

  it("Ollama native, object and kept-text arguments, in the server's order", () => {
    const r = read(
      new AIMessage({
        content: "",
        tool_calls: [
          { id: "o1", name: "create_file", args: misnamed },
          { id: "o2", name: "create_file", args: keptRaw(JSON.stringify(misnamed)) },
          { id: "o3", name: "read_file", args: keptRaw("{") },
        ],
      }),
    );
    expect(r.calls).toEqual([
      { ...expected, id: "o1", type: "tool_call" },
      { ...expected, id: "o2", type: "tool_call" },
    ]);
    expect(r.repairs).toEqual([notes, notes]);
  });

  it("OpenAI-compatible native, with a call its client could not parse, in the server's order", () => {
    const r = read(
      new AIMessage({
        content: "",
        tool_calls: [{ id: "b", name: "read_file", args: { path: "b" } }],
        invalid_tool_calls: [
          {
            id: "a",
            name: "create_file",
            args: "<parameter=file_path>a.txt</parameter><parameter=text>x</parameter>",
            type: "invalid_tool_call",
          },
        ],
        additional_kwargs: { tool_calls: [{ id: "a" }, { id: "b" }] as never },
      }),
    );
    expect(r.calls.map((c) => [c.id, c.name, c.args])).toEqual([
      ["a", "write_file", { path: "a.txt", content: "x" }],
      ["b", "read_file", { path: "b" }],
    ]);
    expect(r.repairs).toEqual([notes, []]);
  });

  it("prompt mode: a call written as text", () => {
    const text = `<tool_call>\n${JSON.stringify({ name: "create_file", arguments: misnamed })}\n</tool_call>`;
    const r = read(new AIMessage({ content: text }), "prompt");
    expect(r.fromText).toBe(true);
    expect(r.calls).toEqual([{ ...expected, type: "tool_call" }]);
    expect(r.repairs).toEqual([notes]);
  });
});
