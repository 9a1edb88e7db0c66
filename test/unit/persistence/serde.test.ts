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
import { KeelSerializer } from "../../../src/persistence/serde.js";

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

describe("KeelSerializer writes", () => {
  /** What a message holds, field by field (its serialised constructor arguments aside). */
  const fields = (m: unknown) => {
    const { lc_kwargs: _kwargs, lc_serializable: _s, ...rest } = m as Record<string, unknown>;
    return rest;
  };

  it.each(values)(
    "%s: read back by either reviver as it was, without the empty defaults",
    async (_name, value) => {
      const [type, bytes] = await keel.dumpsTyped(value);
      const [, theirs] = await stock.dumpsTyped(value);
      const text = new TextDecoder().decode(bytes);
      expect(text).not.toMatch(/"additional_kwargs":\{\}|"response_metadata":\{\}/);
      expect(text).not.toContain('"invalid_tool_calls":[]');
      expect(bytes.length).toBeLessThanOrEqual(theirs.length);
      for (const back of [
        await keel.loadsTyped(type, bytes),
        await stock.loadsTyped(type, bytes),
      ]) {
        const original = await stock.loadsTyped(type, theirs);
        const list = (v: unknown): unknown[] =>
          (v instanceof DeltaSnapshot ? [v.value as unknown] : Array.isArray(v) ? v : [v]).flat();
        expect(list(back).map(fields)).toEqual(list(original).map(fields));
      }
    },
  );

  it("a reading turn's messages: ~90 bytes fewer", async () => {
    const turn = [
      new AIMessage({
        id: "k1",
        content: "",
        tool_calls: [{ id: "call_x", name: "read_file", args: { path: "a" }, type: "tool_call" }],
      }),
      new ToolMessage({ id: "k2", content: "a\n", tool_call_id: "call_x", name: "read_file" }),
    ];
    const [, ours] = await keel.dumpsTyped(turn);
    const [, theirs] = await stock.dumpsTyped(turn);
    expect(theirs.length - ours.length).toBe(
      '"additional_kwargs":{},'.length * 2 +
        '"response_metadata":{},'.length * 2 +
        '"invalid_tool_calls":[],'.length,
    );
  });
});
