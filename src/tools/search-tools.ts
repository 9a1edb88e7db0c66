/** glob and grep: read-only search inside the workspace, in linear time and off the event loop. */
import { stat } from "node:fs/promises";
import path from "node:path";
import { fdir } from "fdir";
import { z } from "zod";
import { missingPath, notAFile, notRegular, sandboxed } from "./fs-tools.js";
import { compileGlob, type GlobMatcher } from "./glob-match.js";
import { GREP_FLAGS, grepSource } from "./grep-pattern.js";
import type { GrepAnswer, GrepJob } from "./grep-worker.js";
import { besideModule, runWorker } from "./off-thread.js";
import { defineTool, fail, ok, type ToolResult } from "./types.js";
import { reallyInside } from "./workspace-path.js";

/** Folders no search wanders into. */
export const SKIPPED_DIRS: readonly string[] = ["node_modules", ".git", ".keel", "dist"];
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

/** A glob compiled for a walk, or the failure the model reads. */
function globOf(tool: string, pattern: string): GlobMatcher | ToolResult {
  const m = compileGlob(pattern.replace(/\\/g, "/"));
  return "refused" in m
    ? fail("invalid_arguments", `${tool}: glob ${JSON.stringify(pattern)}: ${m.refused}.`)
    : m;
}

/**
 * The files under `root` (a real path in the workspace) matching a glob, sorted. A walk never
 * follows a link out: linked folders are not entered, and a linked file counts only when its real
 * path is in the workspace. Folders that cannot hold a match are not entered. Throws when the
 * glob is refused (see compileGlob) or `signal` aborts.
 */
export async function files(
  root: string,
  pattern: string | GlobMatcher,
  workspace: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const m = typeof pattern === "string" ? compileGlob(pattern) : pattern;
  if ("refused" in m) throw new Error(m.refused);
  const from = path.join(root, m.base);
  if (!(await stat(from).catch(() => null))?.isDirectory()) return [];
  const rel = (abs: string) => path.relative(root, abs).split(path.sep).join("/");
  let walk = new fdir()
    .withFullPaths()
    .exclude((name, dir) => {
      if (SKIPPED_DIRS.includes(name) || (name.startsWith(".") && !m.dot)) return true;
      return !m.mayHold(rel(dir));
    })
    .filter((file, isDir) => !isDir && m.matches(rel(file)));
  if (Number.isFinite(m.depth)) walk = walk.withMaxDepth(Math.max(0, m.depth - 1));
  if (signal) walk = walk.withAbortSignal(signal);
  const found = await walk.crawl(from).withPromise();
  signal?.throwIfAborted();
  return found
    .filter((f) => reallyInside(workspace, f))
    .map(rel)
    .sort();
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
    const m = globOf("glob", pattern);
    if ("ok" in m) return m;
    const r = sandboxed(ctx.workspace, p ?? ".");
    if ("failure" in r) return r.failure;
    const st = await stat(r.abs).catch(() => null);
    if (!st) return missingPath("glob", r.rel);
    const found = await files(r.abs, m, ctx.workspace, ctx.signal);
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
    "Search file contents with a regular expression (matched in linear time: no backreferences or lookahead). Returns path:line: text for each match.",
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
    const re = grepSource(pattern);
    if ("invalid" in re)
      return fail(
        "invalid_arguments",
        `grep: pattern is not a valid regular expression: ${re.invalid}`,
      );
    if ("unsupported" in re)
      return fail(
        "invalid_arguments",
        `grep: pattern ${JSON.stringify(pattern)}: ${re.unsupported}.`,
      );
    let only: GlobMatcher | undefined;
    if (glob) {
      const refused = badPattern(glob);
      if (refused) return refused;
      const m = globOf("grep", glob.includes("/") ? glob : `**/${glob}`);
      if ("ok" in m) return m;
      only = m;
    }
    const r = sandboxed(ctx.workspace, p ?? ".");
    if ("failure" in r) return r.failure;
    const st = await stat(r.abs).catch(() => null);
    if (!st) return missingPath("grep", r.rel);
    const what = notRegular(st);
    if (what) return notAFile("grep", r.rel, what);
    const targets = st.isDirectory()
      ? (await files(r.abs, only ?? "**/*", ctx.workspace, ctx.signal)).map((f) =>
          path.join(r.abs, f),
        )
      : [r.abs];
    const job: GrepJob = {
      source: re.source,
      flags: GREP_FLAGS,
      files: targets.map((abs) => ({
        abs,
        rel: path.relative(ctx.workspace, abs).split(path.sep).join("/"),
      })),
      max: MAX_MATCHES,
    };
    // Matching runs on a worker thread: keel answers Ctrl-C and deadlines while a big search runs.
    const { matches, more } = await runWorker<GrepAnswer>(
      besideModule(import.meta.url, "grep-worker"),
      { grep: job },
      ctx.signal,
    );
    if (matches.length === 0) return ok(`no matches for /${pattern}/ in ${r.rel}`);
    return ok(more ? `${matches.join("\n")}\n[more matches not shown]` : matches.join("\n"));
  },
});
