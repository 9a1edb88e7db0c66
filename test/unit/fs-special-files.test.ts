import { execFileSync } from "node:child_process";
import { readFileSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_TOOLS } from "../../src/tools/registry.js";
import type { ToolContext, ToolResult } from "../../src/tools/types.js";
import { tempWorkspace } from "../support/harness.js";

const tool = (name: string) => ALL_TOOLS.find((t) => t.name === name)!;
const context = (): ToolContext => ({
  workspace: tempWorkspace(),
  commandTimeoutMs: 10_000,
  outputLimit: 4000,
});
/** Runs a tool, failing (not hanging) when it takes longer than `ms`. */
async function runWithin(
  ms: number,
  name: string,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolResult> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([tool(name).run(tool(name).schema.parse(args), ctx), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(process.platform === "win32")("a named pipe (FIFO) in the workspace", () => {
  const withFifo = () => {
    const ctx = context();
    execFileSync("mkdir", ["-p", path.join(ctx.workspace, "src")]);
    execFileSync("mkfifo", [path.join(ctx.workspace, "src/pipe")]);
    return ctx;
  };
  it("read_file, write_file and edit_file refuse it at once, saying what it is", async () => {
    const ctx = withFifo();
    for (const [name, args] of [
      ["read_file", { path: "src/pipe" }],
      ["write_file", { path: "src/pipe", content: "x" }],
      ["edit_file", { path: "src/pipe", old_text: "a", new_text: "b" }],
      ["grep", { pattern: "x", path: "src/pipe" }],
      ["analyze_code", { path: "src/pipe" }],
    ] as const) {
      const r = await runWithin(2000, name, args, ctx);
      expect(r).toMatchObject({ ok: false, kind: "refused" });
      expect(!r.ok && r.message).toContain("src/pipe is a named pipe (FIFO), not a regular file");
    }
  });
  it("grep and analyze_code over the folder skip it and search the rest", async () => {
    const ctx = withFifo();
    writeFileSync(path.join(ctx.workspace, "src/a.ts"), "export const findMe = 1;\n");
    execFileSync("mkfifo", [path.join(ctx.workspace, "src/b.ts")]);
    expect(await runWithin(5000, "grep", { pattern: "findMe" }, ctx)).toEqual({
      ok: true,
      output: "src/a.ts:1: export const findMe = 1;",
    });
    const a = await runWithin(5000, "analyze_code", { path: "src" }, ctx);
    expect(a.ok && a.output).toContain("src/a.ts: typescript");
  });
});

describe("a file too large to read whole (700 MB, sparse)", () => {
  const withBigFile = () => {
    const ctx = context();
    const file = path.join(ctx.workspace, "src.log");
    writeFileSync(file, Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
    truncateSync(file, 700 * 1024 * 1024);
    return ctx;
  };
  it("read_file with offset/limit reads only those lines, quickly", async () => {
    const ctx = withBigFile();
    const r = await runWithin(3000, "read_file", { path: "src.log", offset: 2, limit: 3 }, ctx);
    expect(r.ok && r.output).toBe(
      `[lines 2-4; src.log is ${700 * 1024 * 1024} bytes, too large to read whole; read it with offset/limit]\nline 2\nline 3\nline 4`,
    );
  });
  it("a whole read, or a line longer than the output limit, is cut at the limit and says how to read on", async () => {
    const ctx = withBigFile();
    for (const args of [{ path: "src.log" }, { path: "src.log", offset: 11, limit: 5 }]) {
      const r = await runWithin(3000, "read_file", args, ctx);
      expect(r.ok && r.output).toContain("too large to read whole; read it with offset/limit");
      expect(r.ok && r.output).toContain("[truncated at 4000 characters");
      expect(r.ok && r.output.length).toBeLessThan(4400);
    }
  });
  it("an offset past the end says how many lines there are", async () => {
    const ctx = withBigFile();
    const r = await runWithin(10_000, "read_file", { path: "src.log", offset: 20, limit: 2 }, ctx);
    expect(r.ok && r.output).toContain("It has 11 lines: offset 20 is past its end");
  });
  it("edit_file refuses it at once", async () => {
    const ctx = withBigFile();
    const r = await runWithin(
      3000,
      "edit_file",
      { path: "src.log", old_text: "line 2", new_text: "x" },
      ctx,
    );
    expect(!r.ok && r.message).toContain("too large to edit");
  });
});

describe("files of ordinary size read as before", () => {
  it("a whole read and a trailing newline", async () => {
    const ctx = context();
    writeFileSync(path.join(ctx.workspace, "a.txt"), "a\nb\n");
    expect(await runWithin(2000, "read_file", { path: "a.txt" }, ctx)).toMatchObject({
      ok: true,
      output: "a\nb\n",
    });
    const w = await runWithin(2000, "write_file", { path: "a.txt", content: "c\n" }, ctx);
    expect(w).toMatchObject({ ok: true, output: "overwrote a.txt (2 bytes)" });
    expect(readFileSync(path.join(ctx.workspace, "a.txt"), "utf8")).toBe("c\n");
  });
});
