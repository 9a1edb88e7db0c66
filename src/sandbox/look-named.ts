/**
 * What the look over a workspace (look.ts) records of the paths the person's config names: git's
 * for the workspace, each worktree and each bare repository in it (git-named.ts), and its yarn
 * configs' (yarn-named.ts) — each with whether it is there and the links on the way to it — and
 * the names it gives at any depth; with the last complete answer kept for when git is slow.
 */
import { readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { gitNamedPaths, personalConfig, personalNames, type Look } from "./git-named.js";
import { resolves } from "./git-dir.js";
import { lstatOf, readSmall } from "../files/door.js";
import type { ProtectedPath } from "./protected.js";

/**
 * A path the person's git config names (git-named.ts) for the workspace or a repository in it, or
 * one its yarn configs name (yarn-named.ts): whether it was there, and the links on the way to it
 * (workspace-relative, with what each led to) that were.
 */
export interface NamedPath {
  path: string;
  there: boolean;
  links: Array<{ path: string; to?: string }>;
  /** What it led to when it was itself a link (the person's): kept as it was. */
  linkTo?: string;
}

/**
 * The paths git config names for the workspace, each worktree in it (a folder holding a `.git`)
 * and each bare repository, and `atWorkspace` (the workspace's own and its yarn configs'), each
 * with whether it is there, the links on the way to it, and where it led if it was a link. An
 * include file is read once for them all.
 */
export function namedIn(
  workspace: string,
  worktrees: Iterable<string>,
  repos: Iterable<string>,
  marks: { namedIncomplete?: true },
  look: Look,
  atWorkspace: readonly ProtectedPath[],
): NamedPath[] {
  const tops = new Map<string, string>();
  for (const rel of worktrees) {
    const dir = path.join(workspace, rel);
    tops.set(dir, dir);
  }
  for (const rel of repos)
    if (!rel.split("/").some((part) => part.toLowerCase() === ".git")) {
      const dir = path.join(workspace, rel); // a bare repository: hooks run in it
      tops.set(dir, dir);
    }
  tops.delete(workspace); // asked first (`markWorkspace`)
  for (const dir of tops.keys()) if (!askable(dir)) tops.delete(dir);
  const named = new Set(atWorkspace.map((n) => n.path));
  for (const [dir, top] of tops)
    for (const n of gitNamedPaths(workspace, dir, top, look)) named.add(n.path);
  // out of time, the last complete look's names still hold (a command cannot unname them so)
  if (look.slow) {
    marks.namedIncomplete = true;
    for (const rel of lastComplete.get(workspace) ?? []) named.add(rel);
  } else lastComplete.set(workspace, named);
  return [...named].map((rel) => {
    const st = lstatOf(path.join(workspace, rel));
    return {
      path: rel,
      there: st !== undefined,
      links: linksOnTheWay(workspace, rel).map((l) => ({
        path: l,
        to: readLink(path.join(workspace, l)),
      })),
      ...(st?.isSymbolicLink() ? { linkTo: readLink(path.join(workspace, rel)) } : {}),
    };
  });
}

/** Per workspace, the person's names at any depth of the last look git answered (`personalDeep`). */
const lastDeep = new Map<string, string[]>();

/** The person's names at any depth (git-named.ts `personalNames`), the last ones when git fails. */
export function personalDeep(workspace: string, look: Look): string[] {
  const personal = personalConfig(look);
  if (personal === undefined) return lastDeep.get(workspace) ?? [];
  const names = personalNames(personal).map((n) => n.path);
  lastDeep.set(workspace, names);
  return names;
}

/** Per workspace, the names of the last look git answered in full (`namedIn`). */
const lastComplete = new Map<string, Set<string>>();

/**
 * Whether git may be asked in a folder without waiting, and is worth asking: no FIFO or device
 * where git opens its `.git`, config or `commondir` (one a command made is removed as odd; a link
 * that leads nowhere fails at once and is no reason to skip), and a `.git` that is a repository
 * (an empty file, a folder without HEAD costs git's time only: a command can make thousands to run
 * a look out of time).
 */
function askable(dir: string): boolean {
  const waits = (p: string): boolean => {
    const st = lstatOf(p);
    if (st?.isSymbolicLink()) return resolves(p) && waits(realpathSync(p));
    return st !== undefined && special(st);
  };
  if (
    [".git", ".git/config", ".git/commondir", "config", "commondir"].some((p) =>
      waits(path.join(dir, p)),
    )
  )
    return false;
  const dotGit = path.join(dir, ".git");
  const st = lstatOf(dotGit);
  if (st === undefined) return true;
  if (st.isFile()) return readSmall(dotGit)?.startsWith("gitdir: ") === true;
  return lstatOf(path.join(dotGit, "HEAD")) !== undefined || resolves(path.join(dotGit, "HEAD"));
}

export const readLink = (p: string) => {
  try {
    return readlinkSync(p);
  } catch {
    return undefined;
  }
};

/** The folders on a workspace-relative path (not the path itself) that are links. */
export function linksOnTheWay(workspace: string, rel: string): string[] {
  const parts = rel.split("/");
  const links: string[] = [];
  for (let i = 1; i < parts.length; i++) {
    const folder = parts.slice(0, i).join("/");
    if (lstatOf(path.join(workspace, folder))?.isSymbolicLink()) links.push(folder);
  }
  return links;
}

/** A FIFO, socket or device: opening one can block (look.ts `WorkspaceMarks.odd`). */
export const special = (e: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}) => e.isFIFO() || e.isSocket() || e.isCharacterDevice() || e.isBlockDevice();
