/** The tool registry: the tools per intent, their definitions, names looked up and arguments validated. */
import { describe, expect, it } from "vitest";
import {
  ALL_TOOLS,
  lookupTool,
  toolDefinition,
  toolsForIntent,
  validateArgs,
} from "../../../src/tools/registry.js";
import { tool } from "../../support/tools.js";

describe("registry", () => {
  it("gives analyze and chat read-only tools only", () => {
    expect(toolsForIntent("analyze").map((t) => t.name)).toEqual([
      "read_file",
      "list_dir",
      "glob",
      "grep",
      "analyze_code",
    ]);
    expect(toolsForIntent("build")).toHaveLength(9);
  });
  it("produces function definitions with required fields and described properties", () => {
    const def = toolDefinition(tool("write_file"));
    expect(def.function.parameters).toMatchObject({
      type: "object",
      required: ["path", "content"],
    });
    expect(JSON.stringify(def)).toContain("The complete new content of the file");
  });
  it("matches names case-insensitively and reports the repair", () => {
    expect(lookupTool("Write_File", {}, ALL_TOOLS)).toMatchObject({
      found: true,
      repairedFrom: "Write_File",
    });
  });
  it("says when a write tool is not offered for a read-only request", () => {
    const r = lookupTool("write_file", {}, toolsForIntent("analyze"));
    expect(r.found).toBe(false);
    expect(!r.found && r.message).toContain("not available for this request");
  });
  it("validates with per-field messages", () => {
    const r = validateArgs(tool("edit_file"), { path: "a", old_text: 3 });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toMatch(
      /old_text: expected string, received number; new_text: expected string, received nothing/,
    );
  });
});
