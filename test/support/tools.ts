/**
 * keel's tools as the unit tests run them: by name, with a fresh workspace, with a deadline; and
 * the files several tool tests share (a sparse file too large to read whole, a small Python file).
 */
import { truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ALL_TOOLS } from "../../src/tools/registry.js";
import type { ToolContext, ToolResult } from "../../src/tools/types.js";
import { tempWorkspace } from "./harness.js";

/** The tool named `name`. */
export const tool = (name: string) => ALL_TOOLS.find((t) => t.name === name)!;

/** Runs a tool on its parsed arguments. */
export const run = (
  name: string,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolResult> => tool(name).run(tool(name).schema.parse(args), ctx);

/** A tool context on a fresh empty workspace. */
export const context = (extra: Partial<ToolContext> = {}): ToolContext => ({
  workspace: tempWorkspace(),
  commandTimeoutMs: 10_000,
  outputLimit: 4000,
  ...extra,
});

/** Runs a tool, failing (not hanging) when it takes longer than `ms`. */
export async function runWithin(
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

/** A context whose workspace holds src.log: ten lines, then a sparse file of 700 MB. */
export const withBigFile = () => {
  const ctx = context();
  const file = path.join(ctx.workspace, "src.log");
  writeFileSync(file, Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
  truncateSync(file, 700 * 1024 * 1024);
  return ctx;
};

/** A small Python file the edit tests match against. */
export const PY = [
  "class Shop:",
  "    def total(self, items):",
  "        s = 0",
  "        for i in items:",
  "            s += i.price",
  "        return s",
  "",
  "    def count(self, items):",
  "        return len(items)",
  "",
].join("\n");
