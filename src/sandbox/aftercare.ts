/**
 * Around a sandboxed command: what the sandbox cannot hold by itself. Before it runs, the workspace
 * is looked over for protected paths deeper than its top level (the sandbox then holds those too)
 * and for git repositories (a `.git` folder, a bare repository, the target of a `.git` file). After
 * it, what it made that would run code outside the sandbox later is undone: a protected path it
 * created below the top level is removed, and a repository it created or changed loses its hooks
 * and the config keys that make git run a program (`RISKY_GIT_CONFIG`).
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { withoutRiskyGitConfig } from "./policy.js";
import { COMMAND_PROTECTED } from "./protected.js";

/** How deep the look goes, and how many entries it reads at most. */
const MAX_DEPTH = 6;
const MAX_ENTRIES = 100_000;
/** Folders never looked into (they hold other people's code, and a lot of it). */
const SKIP = new Set(["node_modules"]);
/** Protected names that are single path components (`.vscode`, `.envrc`, …). */
const NAMES = new Set(COMMAND_PROTECTED.filter((p) => !p.includes("/")));

/** What the look found: protected paths below the top level, and each repository's fingerprint. */
export interface WorkspaceMarks {
  nested: string[];
  /** Workspace-relative git folder → a fingerprint of its config and hooks, and its hooks. */
  repos: Map<string, { print: string; hooks: string[] }>;
}

/** Looks the workspace over (see the module's comment). Never throws. */
export function markWorkspace(workspace: string): WorkspaceMarks {
  const marks: WorkspaceMarks = { nested: [], repos: new Map() };
  let budget = MAX_ENTRIES;
  const walk = (rel: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(path.join(workspace, rel), { withFileTypes: true });
    } catch {
      return;
    }
    const names = new Set(entries.map((e) => e.name));
    if (names.has("HEAD") && names.has("config") && names.has("objects"))
      marks.repos.set(rel || ".", {
        print: fingerprint(path.join(workspace, rel)),
        hooks: hooksOf(path.join(workspace, rel)),
      });
    for (const e of entries) {
      if (--budget < 0) return;
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (rel && NAMES.has(e.name)) marks.nested.push(child);
      if (e.isDirectory() && !SKIP.has(e.name) && depth < MAX_DEPTH) walk(child, depth + 1);
    }
  };
  walk("", 0);
  return marks;
}

/**
 * What the sandbox holds read-only besides the top-level list: the protected paths found deeper,
 * and each repository's hooks and config (workspace-relative).
 */
export function nestedDenies(marks: WorkspaceMarks, workspace: string): string[] {
  const out = new Set(marks.nested);
  for (const rel of marks.repos.keys())
    for (const part of ["hooks", "config"]) {
      const p = rel === "." ? part : `${rel}/${part}`;
      if (lstatSync(path.join(workspace, p), { throwIfNoEntry: false })) out.add(p);
    }
  return [...out];
}

/** A git folder's config and hooks, hashed: any change shows. */
function fingerprint(gitDir: string): string {
  const h = createHash("sha1");
  try {
    h.update(readFileSync(path.join(gitDir, "config")));
  } catch {
    h.update("no config");
  }
  for (const name of hooksOf(gitDir)) h.update(`\0${name}`);
  return h.digest("hex");
}

const hooksOf = (gitDir: string): string[] => {
  try {
    return readdirSync(path.join(gitDir, "hooks"))
      .filter((n) => !n.endsWith(".sample"))
      .sort();
  } catch {
    return [];
  }
};

/**
 * After a command: removes the protected paths it created below the top level, and cleans every
 * repository it created or changed (hooks other than git's samples removed, risky config keys
 * removed; hooks it had before stay). Returns what was removed, workspace-relative. Never throws.
 */
export function cleanAfter(workspace: string, before: WorkspaceMarks): string[] {
  const removed: string[] = [];
  const after = markWorkspace(workspace);
  try {
    const had = new Set(before.nested);
    for (const rel of after.nested) {
      if (had.has(rel) || [...had].some((h) => rel.startsWith(`${h}/`))) continue;
      rmSync(path.join(workspace, rel), { recursive: true, force: true });
      removed.push(rel);
    }
    for (const [rel, { print }] of after.repos) {
      const was = before.repos.get(rel);
      if (was?.print === print) continue;
      const gitDir = path.join(workspace, rel);
      const at = (p: string) => (rel === "." ? p : `${rel}/${p}`);
      for (const name of hooksOf(gitDir).filter((n) => !was?.hooks.includes(n))) {
        rmSync(path.join(gitDir, "hooks", name), { recursive: true, force: true });
        removed.push(at(`hooks/${name}`));
      }
      const config = path.join(gitDir, "config");
      if (!lstatSync(config, { throwIfNoEntry: false })?.isFile()) continue;
      const clean = withoutRiskyGitConfig(readFileSync(config, "utf8"));
      if (clean.removed.length > 0) {
        writeFileSync(config, clean.text);
        removed.push(...clean.removed.map((k) => `${k} from ${at("config")}`));
      }
    }
  } catch (e) {
    removed.push(`(keel could not finish checking the workspace: ${(e as Error).message})`);
  }
  return removed;
}
