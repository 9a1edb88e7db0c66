import { describe, expect, it } from "vitest";
import { ALL_TOOLS, lookupTool, toolsForIntent, validateArgs } from "../../src/tools/registry.js";

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
