import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { END, Overwrite } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runConfig, settingsFrom } from "../../src/coder/context.js";
import { PROJECT_SETTINGS } from "../../src/run/settings-file.js";
import { tempWorkspace } from "../support/harness.js";
import {
  NODE,
  routeAfterAct,
  routeAfterIntent,
  routeAfterRecover,
  routeAfterToolExecute,
} from "../../src/coder/routing.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { pinsOf, planNote } from "../../src/coder/turn/setup.js";

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

describe("run settings", () => {
  it("are parsed once per run context and frozen", () => {
    const context = { model: "m:1", maxTurns: 7 };
    const a = settingsFrom({ context, configurable: { thread_id: "t" } });
    const b = settingsFrom({ context, configurable: { thread_id: "t", checkpoint_ns: "x" } });
    expect(b).toBe(a);
    expect(a.maxTurns).toBe(7);
    expect(Object.isFrozen(a)).toBe(true);
    // another context, or a setting changed through configurable, is parsed again
    expect(settingsFrom({ context: { ...context } })).not.toBe(a);
    const shared = {};
    expect(settingsFrom({ context: shared, configurable: { maxTurns: 3 } }).maxTurns).toBe(3);
    expect(settingsFrom({ context: shared, configurable: { maxTurns: 5 } }).maxTurns).toBe(5);
  });

  it("of a run made by runConfig are the ones it parsed: the run's nodes read no settings file", () => {
    const ws = tempWorkspace();
    const file = path.join(ws, PROJECT_SETTINGS);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ model: "from-the-file:1" }));
    const config = runConfig("t", { workspace: ws });
    const fresh = settingsFrom({ ...config, context: { ...config.context } });
    // The file broken after the run started (the agent writes there): the run's nodes, which
    // ask for the settings at every step, go on with the ones it started with.
    writeFileSync(file, "{ not json");
    const s = settingsFrom(config);
    expect(s.model).toBe("from-the-file:1");
    expect(s).toEqual(fresh);
    expect(settingsFrom(config)).toBe(s);
    expect(Object.isFrozen(s)).toBe(true);
    // A context parsed anew reads the file, and names it.
    expect(() => settingsFrom({ ...config, context: { ...config.context } })).toThrow(
      /settings\.json/,
    );
  });
});

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
