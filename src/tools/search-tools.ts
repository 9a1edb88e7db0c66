/** glob and grep: read-only search inside the workspace. */
import { stat } from "node:fs/promises";
import path from "node:path";
import { glob as tinyglob } from "tinyglobby";
import { z } from "zod";
import { missingPath, notAFile, notRegular, readRegular, sandboxed } from "./fs-tools.js";
import { defineTool, fail, ok, type ToolResult } from "./types.js";
import { reallyInside } from "./workspace-path.js";

/** Folders no search should wander into. */
export const SKIPPED_DIRS = ["**/node_modules/**", "**/.git/**", "**/.keel/**", "**/dist/**"];
const MAX_MATCHES = 200;

function badPattern(pattern: string): ToolResult | null {
  const p = pattern.replace(/\\/g, "/");
  if (p.startsWith("/") || /^[a-zA-Z]:/.test(p) || p.split("/").includes("..")) {
    return fail(
      "outside_workspace",
      `pattern ${JSON.stringify(pattern)} must stay inside the workspace (no "..", no absolute paths).`,
    );
  }
  return null;
}

/**
 * The files under `root` (a real path in the workspace) matching a pattern. A walk never follows a
 * link out: linked folders are not entered, and a linked file counts only when its real path is in
 * the workspace.
 */
export async function files(root: string, pattern: string, workspace: string): Promise<string[]> {
  const found = await tinyglob(pattern.replace(/\\/g, "/"), {
    cwd: root,
    ignore: SKIPPED_DIRS,
    onlyFiles: true,
    dot: false,
    followSymbolicLinks: false,
  });
  return found.filter((f) => reallyInside(workspace, path.join(root, f))).sort();
}

export const globTool = defineTool({
  name: "glob",
  description: 'Find files by glob pattern, e.g. "src/**/*.ts". Returns workspace-relative paths.',
  toolClass: "explore",
  schema: z.object({
    pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.py"'),
    path: z
      .string()
      .optional()
      .describe("Folder to search in, relative to the workspace (default: root)"),
  }),
  async run({ pattern, path: p }, ctx) {
    const refused = badPattern(pattern);
    if (refused) return refused;
    const r = sandboxed(ctx.workspace, p ?? ".");
    if ("failure" in r) return r.failure;
    const st = await stat(r.abs).catch(() => null);
    if (!st) return missingPath("glob", r.rel);
    const found = await files(r.abs, pattern, ctx.workspace);
    const rel = found.map((f) => path.posix.join(r.rel === "." ? "" : r.rel, f) || f);
    if (rel.length === 0) return ok(`no files match ${pattern} in ${r.rel}`);
    const shown = rel.slice(0, MAX_MATCHES).join("\n");
    return ok(
      rel.length > MAX_MATCHES ? `${shown}\n[${rel.length - MAX_MATCHES} more not shown]` : shown,
    );
  },
});

export const grepTool = defineTool({
  name: "grep",
  description:
    "Search file contents with a regular expression. Returns path:line: text for each match.",
  toolClass: "explore",
  schema: z.object({
    pattern: z.string().min(1).describe("JavaScript regular expression to search for"),
    path: z
      .string()
      .optional()
      .describe("Folder or file to search, relative to the workspace (default: root)"),
    glob: z.string().optional().describe('Only search files matching this glob, e.g. "*.ts"'),
  }),
  async run({ pattern, path: p, glob }, ctx) {
    let re: RegExp;
    try {
      re = new RegExp(pattern);
    } catch (e) {
      return fail(
        "invalid_arguments",
        `grep: pattern is not a valid regular expression: ${(e as Error).message}`,
      );
    }
    if (glob) {
      const refused = badPattern(glob);
      if (refused) return refused;
    }
    const r = sandboxed(ctx.workspace, p ?? ".");
    if ("failure" in r) return r.failure;
    const st = await stat(r.abs).catch(() => null);
    if (!st) return missingPath("grep", r.rel);
    const what = notRegular(st);
    if (what) return notAFile("grep", r.rel, what);
    const targets = st.isDirectory()
      ? (
          await files(
            r.abs,
            glob ? (glob.includes("/") ? glob : `**/${glob}`) : "**/*",
            ctx.workspace,
          )
        ).map((f) => path.join(r.abs, f))
      : [r.abs];
    const matches: string[] = [];
    for (const file of targets) {
      if (ctx.signal?.aborted) break;
      // a FIFO, socket or device met on the walk is skipped (readRegular refuses it without blocking)
      const text = await readRegular(file).then(
        (b) => b.toString("utf8"),
        () => "",
      );
      if (text.includes("\0")) continue; // binary
      const rel = path.relative(ctx.workspace, file).split(path.sep).join("/");
      text.split("\n").forEach((line, i) => {
        if (matches.length <= MAX_MATCHES && re.test(line))
          matches.push(`${rel}:${i + 1}: ${line.slice(0, 300)}`);
      });
      if (matches.length > MAX_MATCHES) break;
    }
    if (matches.length === 0) return ok(`no matches for /${pattern}/ in ${r.rel}`);
    return ok(
      matches.length > MAX_MATCHES
        ? `${matches.slice(0, MAX_MATCHES).join("\n")}\n[more matches not shown]`
        : matches.join("\n"),
    );
  },
});
