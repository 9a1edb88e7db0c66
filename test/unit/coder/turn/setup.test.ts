/** pinsOf: the messages a fold keeps, from the positions kept in state. */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { pinsOf, planNote } from "../../../../src/coder/turn/setup.js";

const call = (id: string) =>
  new AIMessage({ id: `ai-${id}`, content: "", tool_calls: [{ id, name: "read_file", args: {} }] });
const result = (id: string) =>
  new ToolMessage({ id: `tm-${id}`, content: "ok", tool_call_id: id, name: "read_file" });

describe("pinsOf: the messages a fold keeps, from the positions kept in state", () => {
  const request = new HumanMessage({ id: "r", content: "fix it" });
  const plan = planNote(["read", "fix"]);
  const messages = [
    new HumanMessage("earlier"),
    call("c0"),
    result("c0"),
    request,
    plan,
    call("c1"),
  ];
  it("takes the request's and the plan note's positions without scanning", () => {
    const state = { messages, request: "fix it", requestAt: 3, planAt: 4 };
    expect(pinsOf(state)).toEqual([3, 4]);
    // A plan note position that is not a plan note is not pinned.
    expect(pinsOf({ ...state, planAt: 5 })).toEqual([3]);
  });
  it("scans a thread saved before the positions were kept, or whose position is stale", () => {
    expect(pinsOf({ messages, request: "fix it", requestAt: -1, planAt: -1 })).toEqual([3, 4]);
    expect(pinsOf({ messages, request: "fix it", requestAt: 0, planAt: -1 })).toEqual([3, 4]);
  });
});
