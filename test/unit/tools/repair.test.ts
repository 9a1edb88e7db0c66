/** The repairs of a call: a tool's name, its arguments; and properties of both (fast-check): they never throw, never invent. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  ALL_TOOLS,
  lookupTool,
  toolsForIntent,
  validateArgs,
} from "../../../src/tools/registry.js";
import { repairArguments } from "../../../src/tools/repair.js";

const tool = (name: string) => ALL_TOOLS.find((t) => t.name === name)!;

describe("tool name repair", () => {
  it.each([
    ["WRITE_FILE", {}, "write_file"],
    ["bash", { command: "ls" }, "run_command"],
    ["shell", { command: "ls" }, "run_command"],
    ["execute", { command: "ls" }, "run_command"],
    ["ls", { path: "." }, "list_dir"],
    ["list_directory", { path: "." }, "list_dir"],
    ["cat", { path: "a" }, "read_file"],
    ["create_file", { path: "a", content: "x" }, "write_file"],
    ["writeFile", { path: "a", content: "x" }, "write_file"],
    ["mkdir", { path: "a" }, "make_dir"],
    ["str_replace", { path: "a", old_str: "x", new_str: "y" }, "edit_file"],
    ["functions.read_file", { path: "a" }, "read_file"],
  ])("%s → %s", (name, args, expected) => {
    const r = lookupTool(name, args, ALL_TOOLS);
    expect(r).toMatchObject({ found: true, tool: { name: expected } });
    if (r.found && name !== expected)
      expect(r.notes.join()).toContain(`called ${expected} for ${name}`);
  });

  it("maps filesystem {operation} to the operation's tool and drops the operation", () => {
    const r = lookupTool(
      "filesystem",
      { operation: "write", path: "a.txt", content: "x" },
      ALL_TOOLS,
    );
    expect(r).toMatchObject({
      found: true,
      tool: { name: "write_file" },
      args: { path: "a.txt", content: "x" },
    });
    expect(r.found && r.notes[0]).toBe("called write_file for filesystem operation=write");
  });

  it("does not map to a tool the intent does not offer", () => {
    const r = lookupTool("bash", { command: "rm -rf x" }, toolsForIntent("analyze"));
    expect(r.found).toBe(false);
  });

  it("names the closest tools for an unknown name", () => {
    const r = lookupTool("analyzeDom", {}, ALL_TOOLS);
    expect(!r.found && r.message).toMatch(/Closest: analyze_code/);
  });
});

describe("argument repair", () => {
  it.each([
    [
      "write_file",
      { file_path: "a", text: "x" },
      { path: "a", content: "x" },
      ["used file_path as path", "used text as content"],
    ],
    [
      "write_file",
      { filename: "a", contents: "x" },
      { path: "a", content: "x" },
      ["used filename as path", "used contents as content"],
    ],
    [
      "run_command",
      { cmd: "ls", timeout_ms: "500" },
      { command: "ls", timeout_ms: 500 },
      ["used cmd as command", 'timeout_ms: "500" → 500'],
    ],
    ["read_file", { path: "a", limit: "10" }, { path: "a", limit: 10 }, ['limit: "10" → 10']],
    ["write_file", { path: 5, content: "x" }, { path: "5", content: "x" }, ['path: 5 → "5"']],
    [
      "edit_file",
      { path: "a", old_string: "x", new_string: "y" },
      { path: "a", old_text: "x", new_text: "y" },
      ["used old_string as old_text", "used new_string as new_text"],
    ],
    [
      "write_file",
      '{"path": "a", "content": "x"}',
      { path: "a", content: "x" },
      ["parsed the arguments from a JSON string"],
    ],
  ])("%s %j", (name, args, value, notes) => {
    const r = validateArgs(tool(name), args);
    expect(r).toEqual({ ok: true, value, notes });
  });

  it("never guesses content", () => {
    const r = validateArgs(tool("write_file"), { path: "a" });
    expect(r.ok).toBe(false);
  });

  it("does not coerce what is ambiguous", () => {
    expect(validateArgs(tool("read_file"), { path: "a", limit: "ten" }).ok).toBe(false);
    expect(validateArgs(tool("read_file"), { path: "a", limit: "2.5" }).ok).toBe(false);
  });

  it("leaves valid arguments untouched, with no notes", () => {
    expect(validateArgs(tool("read_file"), { path: "a" })).toEqual({
      ok: true,
      value: { path: "a" },
      notes: [],
    });
  });
});

const value = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null));
const args = fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), value, { maxKeys: 4 });

describe("repair properties", () => {
  const schemas = ALL_TOOLS.map((t) => t);
  it("never throws on any arguments, and never invents content", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...schemas),
        fc.oneof(fc.anything(), args, fc.string()),
        (tool, input) => {
          const schema = {
            properties: {
              path: { type: "string" },
              content: { type: "string" },
              limit: { type: "integer" },
            },
          };
          const repaired = repairArguments(input, schema);
          const hadContent =
            input !== null &&
            typeof input === "object" &&
            Object.keys(input).some((k) =>
              [
                "content",
                "text",
                "contents",
                "data",
                "body",
                "file_text",
                "code",
                "file_content",
              ].includes(k),
            );
          const out = repaired.args as Record<string, unknown> | null;
          if (!hadContent && typeof input !== "string" && out && typeof out === "object")
            expect("content" in out).toBe(false);
          const v = validateArgs(tool, input);
          expect(typeof v.ok).toBe("boolean");
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a tool name lookup never throws and only ever returns an offered tool", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), fc.anything(), (n, a) => {
        const r = lookupTool(n, a, ALL_TOOLS);
        if (r.found) expect(ALL_TOOLS).toContain(r.tool);
        else expect(r.message).toContain("Available tools");
      }),
      { numRuns: 500 },
    );
  });
});
