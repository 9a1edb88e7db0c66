import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { END, messagesDeltaReducer, Overwrite } from "@langchain/langgraph";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runConfig, settingsFrom } from "../../src/agent/context.js";
import { PROJECT_SETTINGS } from "../../src/run/settings-file.js";
import { tempWorkspace } from "../support/harness.js";
import { NODE, routeAfterAct, routeAfterToolExecute } from "../../src/agent/routing.js";
import { stateAfter, type CoderStateValue } from "../../src/agent/state.js";
import type { TrailEntry } from "../../src/guard/loop.js";
import { pinsOf, planNote } from "../../src/agent/turn/setup.js";

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

describe("stateAfter", () => {
  it("applies each field's own reducer: messages and trail append, files unite, plain fields replace", () => {
    const state = {
      ...base(),
      messages: [new HumanMessage({ id: "h", content: "go" })],
      trail: [{ name: "read_file" } as TrailEntry],
      filesWritten: ["a.ts"],
      turns: 1,
    };
    const after = stateAfter(state, {
      messages: [call("c1")],
      trail: { name: "write_file" } as TrailEntry,
      filesWritten: ["a.ts", "b.ts"],
      turns: 2,
      failure: null,
    });
    expect(after.messages.map((m) => m.id)).toEqual(["h", "ai-c1"]);
    expect(after.trail.map((t) => t.name)).toEqual(["read_file", "write_file"]);
    expect(after.filesWritten).toEqual(["a.ts", "b.ts"]);
    expect(after.turns).toBe(2);
    expect(after.failure).toBeNull();
    // the state it started from is untouched
    expect(state.messages).toHaveLength(1);
    expect(state.trail).toHaveLength(1);
  });

  it("replaces a message with the same id and honours Overwrite", () => {
    const state = { ...base(), messages: [call("c1")], trail: [{ name: "x" } as TrailEntry] };
    const replaced = new AIMessage({ id: "ai-c1", content: "changed" });
    const after = stateAfter(state, { messages: [replaced], trail: new Overwrite([]) });
    expect(after.messages).toEqual([replaced]);
    expect(after.trail).toEqual([]);
  });

  it("gives the messages LangGraph's reducer gives, with and without ids (property)", () => {
    const message = fc.record({
      kind: fc.constantFrom("ai", "tool", "human"),
      id: fc.option(fc.constantFrom("a", "b", "c", "d"), { nil: undefined }),
      text: fc.string({ maxLength: 5 }),
    });
    const make = ({ kind, id, text }: { kind: string; id?: string; text: string }) =>
      kind === "ai"
        ? new AIMessage({ id, content: text })
        : kind === "tool"
          ? new ToolMessage({ id, content: text, tool_call_id: "x" })
          : new HumanMessage({ id, content: text });
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 6 }),
        fc.array(message, { maxLength: 3 }),
        (a, b) => {
          const current = messagesDeltaReducer([], [a.map(make)]);
          const written = b.map(make);
          const after = stateAfter({ ...base(), messages: current }, { messages: written });
          expect(after.messages).toEqual(messagesDeltaReducer(current, [written]));
        },
      ),
    );
  });

  it("gives the routers the state the node leaves", () => {
    const asked = stateAfter(base(), { messages: [call("c1"), call("c2")], turns: 1 });
    expect(routeAfterAct(asked)).toBe(NODE.toolExecute);
    const half = stateAfter(asked, { messages: [result("c1")] });
    expect(routeAfterToolExecute(half)).toBe(NODE.toolExecute);
    const answered = stateAfter(half, { messages: [result("c2")] });
    expect(routeAfterToolExecute(answered)).toBe(NODE.act);
    expect(routeAfterAct(stateAfter(answered, { status: "done" }))).toBe(END);
    const failed = stateAfter(answered, { failure: { kind: "empty", detail: "nothing" } });
    expect(routeAfterAct(failed)).toBe(NODE.recover);
    // act clears an old failure when it succeeds
    expect(routeAfterAct(stateAfter(failed, { failure: null, messages: [call("c3")] }))).toBe(
      NODE.toolExecute,
    );
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
