/** keel's serializer reads back what LangGraph's would, message for message, only faster. */
import {
  AIMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { DeltaSnapshot, JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { KeelSerializer } from "../../src/persistence/serde.js";

const stock = new JsonPlusSerializer();
const keel = new KeelSerializer();

const values: Array<[string, unknown]> = [
  ["a human message with a name", new HumanMessage({ id: "h1", content: "go", name: "keel" })],
  [
    "an AI message with tool calls and keel's usage",
    new AIMessage({
      id: "a1",
      content: "",
      tool_calls: [{ id: "c1", name: "read_file", args: { path: "a.ts" }, type: "tool_call" }],
      response_metadata: { keel_usage: { promptTokens: 10, reusedTokens: 2 } },
      usage_metadata: { input_tokens: 10, output_tokens: 2, total_tokens: 12 },
      additional_kwargs: { reasoning: "think" },
    }),
  ],
  [
    "a failed tool result",
    new ToolMessage({ id: "t1", content: "no", tool_call_id: "c1", name: "x", status: "error" }),
  ],
  ["content blocks", new HumanMessage({ content: [{ type: "text", text: "hi" }] })],
  ["a system message and a removal", [new SystemMessage("s"), new RemoveMessage({ id: "h1" })]],
  [
    "a delta snapshot of messages",
    new DeltaSnapshot([new HumanMessage({ id: "x", content: "y" })]),
  ],
  ["plain data with undefined", { a: 1, b: undefined, c: [undefined, "z"] }],
  ["a Set (LangGraph's reviver)", { s: new Set([1, 2]) }],
];

describe("KeelSerializer", () => {
  it.each(values)("%s: the same value back as JsonPlusSerializer", async (_name, value) => {
    const [type, bytes] = await stock.dumpsTyped(value);
    const ours = await keel.loadsTyped(type, bytes);
    const theirs = await stock.loadsTyped(type, bytes);
    expect(ours).toEqual(theirs);
    const classes = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(classes) : (v as object | null)?.constructor?.name;
    expect(classes(ours)).toEqual(classes(theirs));
    if (value instanceof AIMessage)
      expect((ours as AIMessage).tool_calls).toEqual(value.tool_calls);
  });

  it("a key named __proto__ (a file the agent read) comes back as a key, not a prototype", async () => {
    const [type, bytes] = await stock.dumpsTyped(
      JSON.parse('{"seen":{"__proto__":{"x":"1"},"a.ts":"h"}}'),
    );
    const back = (await keel.loadsTyped(type, bytes)) as { seen: Record<string, unknown> };
    expect(Object.keys(back.seen)).toEqual(["__proto__", "a.ts"]);
    expect(Object.getPrototypeOf(back.seen)).toBe(Object.prototype);
    expect((back.seen as { x?: string }).x).toBeUndefined();
  });
});
