/** The coder graph's routers read what their node decided (state, update). */
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { END, Overwrite } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import {
  NODE,
  routeAfterAct,
  routeAfterIntent,
  routeAfterRecover,
  routeAfterToolExecute,
} from "../../../src/coder/routing.js";
import type { CoderStateValue } from "../../../src/coder/state.js";

const base = (): CoderStateValue =>
  ({
    messages: [],
    request: "",
    workspaceAtStart: "",
    planSteps: [],
    turns: 0,
    trail: [],
    filesWritten: [],
    loopHits: {},
    errorStreak: 0,
    strikes: {},
    status: "running",
    summary: "",
  }) as unknown as CoderStateValue;

const call = (id: string) =>
  new AIMessage({ id: `ai-${id}`, content: "", tool_calls: [{ id, name: "read_file", args: {} }] });
const result = (id: string) =>
  new ToolMessage({ id: `tm-${id}`, content: "ok", tool_call_id: id, name: "read_file" });

describe("the routers read what their node decided (state, update)", () => {
  it("send act's calls to tool-execute, one call per step, then back to act", () => {
    const asked = { messages: [call("c1"), call("c2")], turns: 1 };
    expect(routeAfterAct(base(), asked)).toBe(NODE.toolExecute);
    const before = { ...base(), messages: asked.messages };
    expect(routeAfterToolExecute(before, { messages: [result("c1")] })).toBe(NODE.toolExecute);
    const half = { ...base(), messages: [...asked.messages, result("c1")] };
    expect(routeAfterToolExecute(half, { messages: [result("c2")] })).toBe(NODE.act);
  });

  it("end the run at a final answer, and send a failure to recover", () => {
    const answered = { ...base(), messages: [call("c1"), result("c1")] };
    expect(routeAfterAct(answered, { status: "done" })).toBe(END);
    expect(routeAfterAct(answered, { failure: { kind: "empty", detail: "nothing" } })).toBe(
      NODE.recover,
    );
    // act clears an old failure when it succeeds
    const failed = { ...answered, failure: { kind: "empty" as const, detail: "nothing" } };
    expect(routeAfterAct(failed, { failure: null, messages: [call("c3")] })).toBe(NODE.toolExecute);
    // a failure the node left in place still holds
    expect(routeAfterToolExecute(failed, { messages: [result("c3")] })).toBe(NODE.recover);
    // a reply without calls, failure or answer is a failure of its own
    expect(routeAfterAct(answered, { messages: [new AIMessage({ content: "" })] })).toBe(
      NODE.recover,
    );
  });

  it("read a move out of the conversation and an Overwrite as act writes them", () => {
    const moved = { messages: [{ keel_moved: ["h"] }, call("c4")] };
    expect(routeAfterAct(base(), moved)).toBe(NODE.toolExecute);
    expect(routeAfterAct(base(), { messages: new Overwrite([call("c5"), result("c5")]) })).toBe(
      NODE.recover,
    );
  });

  it("send recover where its update says: a stop ends, a re-plan plans, the rest acts", () => {
    expect(routeAfterRecover(base(), { status: "gave_up", summary: "x" })).toBe(END);
    expect(routeAfterRecover(base(), { status: "needs_human" })).toBe(END);
    expect(routeAfterRecover(base(), { replanReason: "" })).toBe(NODE.plan);
    expect(routeAfterRecover(base(), { messages: [] })).toBe(NODE.act);
    expect(routeAfterRecover(base(), {})).toBe(NODE.act);
  });

  it("send chat straight to act and everything else to plan", () => {
    const chat = { intent: "chat" as const, confidence: 1, source: "rules" as const };
    expect(routeAfterIntent(base(), { intent: chat })).toBe(NODE.act);
    expect(routeAfterIntent(base(), { intent: { ...chat, intent: "build" } })).toBe(NODE.plan);
    // a follow-up that keeps the thread's intent writes none
    expect(routeAfterIntent({ ...base(), intent: chat }, {})).toBe(NODE.act);
  });
});
