/**
 * The one repair pass (tools/call-repair.ts): a call's name and arguments repaired, each repair
 * said, what the model wrote kept; on keel's tools and on an MCP server's (its own JSON schema).
 */
import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { readReply } from "../../../src/coder/nodes/act/channel.js";
import { schemaForModel } from "../../../src/mcp/config.js";
import { keptRaw } from "../../../src/models/reply-facts.js";
import { repairCall, schemasOf } from "../../../src/tools/call-repair.js";
import { ALL_TOOLS, toolsForIntent } from "../../../src/tools/registry.js";
import { defineTool, ok, type KeelTool } from "../../../src/tools/types.js";

const tools = ALL_TOOLS;

describe("repairCall", () => {
  it("leaves a valid call as it came, with no notes", () => {
    expect(repairCall({ name: "read_file", args: { path: "a" }, id: "c1" }, tools)).toEqual({
      name: "read_file",
      args: { path: "a" },
      id: "c1",
      notes: [],
    });
  });

  it("maps a foreign name and repairs the arguments, saying each", () => {
    expect(
      repairCall({ name: "create_file", args: { file_path: "a.txt", text: "x" } }, tools),
    ).toEqual({
      name: "write_file",
      args: { path: "a.txt", content: "x" },
      notes: [
        "called write_file for create_file",
        "used file_path as path",
        "used text as content",
      ],
    });
  });

  it("reads arguments that arrived as text silently, typed by the tool's schema", () => {
    // Ollama's string, kept by the wire; an OpenAI-compatible server's XML parameters
    expect(repairCall({ name: "read_file", args: keptRaw('{"path": "a"}') }, tools)).toEqual({
      name: "read_file",
      args: { path: "a" },
      notes: [],
    });
    expect(
      repairCall(
        { name: "read_file", args: "<parameter=path>a</parameter><parameter=limit>10</parameter>" },
        tools,
      ),
    ).toEqual({ name: "read_file", args: { path: "a", limit: 10 }, notes: [] });
    // encoded twice
    expect(
      repairCall({ name: "read_file", args: JSON.stringify(JSON.stringify({ path: "a" })) }, tools)
        ?.args,
    ).toEqual({ path: "a" });
  });

  it("leaves out a call whose arguments cannot be read", () => {
    expect(repairCall({ name: "write_file", args: keptRaw('{"path": "a", "con') }, tools)).toBe(
      undefined,
    );
    expect(repairCall({ name: "read_file", args: "path is a.txt" }, tools)).toBe(undefined);
  });

  it("repairs only what makes the call valid, and stores what the model wrote, not the schema's output", () => {
    // "ten" cannot become a number: the call stays as it was, for tool-execute to refuse
    expect(repairCall({ name: "read_file", args: { path: "a", limit: "ten" } }, tools)).toEqual({
      name: "read_file",
      args: { path: "a", limit: "ten" },
      notes: [],
    });
    // no defaults filled in: the conversation holds the model's call
    expect(repairCall({ name: "run_command", args: { cmd: "ls" } }, tools)?.args).toEqual({
      command: "ls",
    });
  });

  it("keeps a name no repair maps (tool-execute answers it), and maps none to a tool not offered", () => {
    expect(repairCall({ name: "analyzeDom", args: {} }, tools)).toEqual({
      name: "analyzeDom",
      args: {},
      notes: [],
    });
    expect(
      repairCall({ name: "bash", args: { command: "ls" } }, toolsForIntent("analyze")),
    ).toEqual({ name: "bash", args: { command: "ls" }, notes: [] });
  });
});

describe("repairCall on a tool from an MCP server (its own JSON schema)", () => {
  // built as mcp/session.ts builds one: validated by a schema read from the server's JSON Schema,
  // offered to the model with that JSON Schema
  const inputSchema = {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  };
  const add: KeelTool = {
    ...defineTool({
      name: "calc__add",
      description: "adds",
      toolClass: "explore",
      schema: z.fromJSONSchema(inputSchema as Parameters<typeof z.fromJSONSchema>[0]),
      run: () => Promise.resolve(ok("")),
    }),
    parameters: schemaForModel(inputSchema),
  };

  it("types what the schema makes certain, and says so", () => {
    expect(repairCall({ name: "calc__add", args: { a: "2", b: 40 } }, [add])).toEqual({
      name: "calc__add",
      args: { a: 2, b: 40 },
      notes: ['a: "2" → 2'],
    });
  });

  it("in a reply: Ollama's string arguments and a misspelt name reach the message repaired", () => {
    const r = readReply(
      new AIMessage({
        content: "",
        tool_calls: [{ id: "m1", name: "CALC__ADD", args: keptRaw('{"a": "2", "b": 40}') }],
      }),
      { mode: "native", format: "hermes", tools: [add], schemas: schemasOf([add]) },
    );
    expect(r.calls).toEqual([
      { name: "calc__add", args: { a: 2, b: 40 }, id: "m1", type: "tool_call" },
    ]);
    expect(r.repairs).toEqual([["called calc__add for CALC__ADD", 'a: "2" → 2']]);
  });
});
