import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ALL_TOOLS,
  lookupTool,
  toolDefinition,
  toolsForIntent,
  validateArgs,
} from "../../src/tools/registry.js";
import { runCommandTool } from "../../src/tools/run-command.js";
import type { ToolContext, ToolResult } from "../../src/tools/types.js";
import { tempWorkspace } from "../support/harness.js";

const tool = (name: string) => ALL_TOOLS.find((t) => t.name === name)!;
const run = (name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> =>
  tool(name).run(tool(name).schema.parse(args), ctx);
const context = (extra: Partial<ToolContext> = {}): ToolContext => ({
  workspace: tempWorkspace(),
  commandTimeoutMs: 10_000,
  outputLimit: 4000,
  ...extra,
});

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

describe("file tools", () => {
  it("edit_file replaces exactly one occurrence and refuses ambiguity", async () => {
    const ctx = context();
    writeFileSync(path.join(ctx.workspace, "a.txt"), "x = 1\ny = 1\n");
    expect(
      (await run("edit_file", { path: "a.txt", old_text: "= 1", new_text: "= 2" }, ctx)).ok,
    ).toBe(false);
    expect(
      (await run("edit_file", { path: "a.txt", old_text: "y = 1", new_text: "y = $&2" }, ctx)).ok,
    ).toBe(true);
    expect(readFileSync(path.join(ctx.workspace, "a.txt"), "utf8")).toBe("x = 1\ny = $&2\n");
  });
  it("read_file pages by lines and points folders at list_dir", async () => {
    const ctx = context();
    writeFileSync(path.join(ctx.workspace, "n.txt"), "1\n2\n3\n4\n5");
    const r = await run("read_file", { path: "n.txt", offset: 2, limit: 2 }, ctx);
    expect(r).toMatchObject({ ok: true, output: "[lines 2-3 of 5]\n2\n3" });
    const dir = await run("read_file", { path: "." }, ctx);
    expect(!dir.ok && dir.message).toContain("call list_dir");
  });
  it("write_file creates parent folders", async () => {
    const ctx = context();
    const r = await run("write_file", { path: "deep/er/x.js", content: "1" }, ctx);
    expect(r).toMatchObject({ ok: true, filesWritten: ["deep/er/x.js"] });
    expect(readFileSync(path.join(ctx.workspace, "deep/er/x.js"), "utf8")).toBe("1");
  });
  it("grep finds matches with line numbers; glob lists files", async () => {
    const ctx = context();
    await run(
      "write_file",
      { path: "src/a.ts", content: "const a = 1;\nexport function findMe() {}\n" },
      ctx,
    );
    expect(await run("grep", { pattern: "findMe", glob: "*.ts" }, ctx)).toEqual({
      ok: true,
      output: "src/a.ts:2: export function findMe() {}",
    });
    expect(await run("glob", { pattern: "**/*.ts" }, ctx)).toEqual({
      ok: true,
      output: "src/a.ts",
    });
  });
  it("analyze_code parses TypeScript and Python with tree-sitter", async () => {
    const ctx = context();
    await run(
      "write_file",
      {
        path: "src/a.ts",
        content:
          'import { x } from "./x.js";\nexport class Users {}\nexport const total = 3;\nfunction helper() {}\n',
      },
      ctx,
    );
    await run(
      "write_file",
      {
        path: "tool.py",
        content:
          "import os\nfrom pathlib import Path\n\nclass Tool:\n    pass\n\ndef main():\n    pass\n",
      },
      ctx,
    );
    const ts = await run("analyze_code", { path: "src/a.ts" }, ctx);
    expect(ts.ok && ts.output).toContain("typescript, 5 lines");
    expect(ts.ok && ts.output).toContain("imports: ./x.js");
    expect(ts.ok && ts.output).toContain(
      "export class Users (line 2); export variable total (line 3); function helper (line 4)",
    );
    const folder = await run("analyze_code", { path: "." }, ctx);
    expect(folder.ok && folder.output).toMatch(/python: 1 files/);
    expect(folder.ok && folder.output).toMatch(/class Tool \(line 4\); function main \(line 7\)/);
  });
});

describe("a file that is not UTF-8", () => {
  it("read_file says so and where; edit_file refuses it and leaves every byte as it was", async () => {
    const ctx = context();
    const bytes = Buffer.from("caf\xe9 na\xefve bytes\n", "latin1");
    writeFileSync(path.join(ctx.workspace, "latin1.txt"), bytes);
    const read = await run("read_file", { path: "latin1.txt" }, ctx);
    expect(read.ok && read.output).toContain(
      "[latin1.txt is not UTF-8 text (byte 0xE9 at offset 3)",
    );
    const edit = await run(
      "edit_file",
      { path: "latin1.txt", old_text: "bytes", new_text: "BYTES" },
      { ...ctx, seen: read.ok ? read.seen : undefined },
    );
    expect(edit.ok).toBe(false);
    expect(!edit.ok && edit.message).toContain(
      "latin1.txt is not UTF-8 text (byte 0xE9 at offset 3)",
    );
    expect(readFileSync(path.join(ctx.workspace, "latin1.txt"))).toEqual(bytes);
    // UTF-8 text is read and edited as before
    writeFileSync(path.join(ctx.workspace, "u.txt"), "café bytes\n");
    const u = await run("read_file", { path: "u.txt" }, ctx);
    expect(u.ok && u.output).toBe("café bytes\n");
    expect(
      (await run("edit_file", { path: "u.txt", old_text: "bytes", new_text: "B" }, ctx)).ok,
    ).toBe(true);
  });
});

describe("run_command", () => {
  it("runs in the workspace and returns the exit code and output", async () => {
    const ctx = context();
    const r = await run("run_command", { command: "pwd && echo hi" }, ctx);
    expect(r).toEqual({ ok: true, output: `exit code 0\n${ctx.workspace}\nhi` });
  });
  it("reports a failing command as an error with its output", async () => {
    const r = await run("run_command", { command: "echo oops 1>&2; exit 3" }, context());
    expect(r).toEqual({ ok: false, kind: "failed", message: "run_command: exit code 3\noops" });
  });
  it("kills a command at its timeout", async () => {
    const r = await run("run_command", { command: "sleep 5", timeout_ms: 200 }, context());
    expect(r).toMatchObject({ ok: false, kind: "timeout" });
  });
  it("declares what needs a person, refuses it unless the gate allowed it, runs it when allowed", async () => {
    const refused = await run(
      "run_command",
      { command: "curl --version > /dev/null; echo ran" },
      context(),
    );
    expect(refused).toMatchObject({ ok: false, kind: "needs_approval" });
    expect(!refused.ok && refused.message).toContain("--yes");
    const command = "kill -0 $$ ; echo ran";
    const declared = await runCommandTool.declare!({ command }, context());
    expect(declared.ask?.reason).toMatch(/kill/);
    expect(await run("run_command", { command }, context())).toMatchObject({
      kind: "needs_approval",
    });
    const approved = await run("run_command", { command }, context({ approved: true }));
    expect(approved).toMatchObject({ ok: true });
    expect(approved.ok && approved.output).toContain("ran");
  });
  it("caps output, keeping head and tail", async () => {
    const r = await run("run_command", { command: "seq 1 20000" }, context());
    expect(r.ok && r.output).toMatch(/^exit code 0\n1\n2\n[\s\S]*characters cut[\s\S]*20000$/);
  });
});
