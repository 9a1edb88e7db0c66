/**
 * A workspace with links planted as a command would: to a file outside, to /etc, dangling,
 * chained, and to a protected folder inside (the file tools and the walks must follow none out).
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll } from "vitest";
import type { ToolContext, ToolResult } from "../../src/tools/types.js";
import { tempWorkspace } from "./harness.js";
import { tool } from "./tools.js";

/** The text of root/secret.txt, beside the workspace: no tool may show it. */
export const SECRET = "SECRET-BESIDE-THE-WORKSPACE";

/**
 * A fresh root holding secret.txt and the workspace ws/: src/a.ts, and links from it to the
 * secret, to root, to /etc, a dangling one, a chain, one to .vscode, and one to src/a.ts.
 */
export function linkedWorkspace(): { root: string; ws: string; ctx: ToolContext } {
  const root = tempWorkspace("keel-links-");
  const ws = path.join(root, "ws");
  mkdirSync(path.join(ws, "src"), { recursive: true });
  writeFileSync(path.join(root, "secret.txt"), SECRET);
  writeFileSync(path.join(ws, "src", "a.ts"), "export const a = 1;\n");
  symlinkSync(path.join(root, "secret.txt"), path.join(ws, "src", "secret-link.ts"));
  symlinkSync(root, path.join(ws, "src", "dir-out"));
  symlinkSync("/etc", path.join(ws, "etc"));
  symlinkSync(path.join(root, "created-through-link.txt"), path.join(ws, "dangling.txt"));
  symlinkSync("src/dir-out", path.join(ws, "chain1"));
  symlinkSync("chain1", path.join(ws, "chain2"));
  symlinkSync(".vscode", path.join(ws, "editor"));
  symlinkSync("src/a.ts", path.join(ws, "inside-link.ts"));
  return { root, ws, ctx: { workspace: ws, commandTimeoutMs: 5000, outputLimit: 50_000 } };
}

/**
 * A `linkedWorkspace` made once before the file's tests, and a tool run in it by name (`run`);
 * `made()` gives the workspace itself.
 */
export function linkedTools() {
  let made: ReturnType<typeof linkedWorkspace>;
  beforeAll(() => {
    made = linkedWorkspace();
  });
  return {
    made: () => made,
    run: (name: string, args: Record<string, unknown>): Promise<ToolResult> =>
      tool(name).run(tool(name).schema.parse(args), made.ctx),
  };
}

/** A tool result's text, whether it succeeded or not. */
export const text = (r: ToolResult) => (r.ok ? r.output : r.message);
