/**
 * Where git goes, as git reads it (setup.c), for the look over a workspace: whether a folder is a
 * repository's git folder, and where a `.git` file or a `commondir` sends git. Never throws; never
 * follows a link out of the workspace.
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import { lstatOf, readSmall } from "../files/door.js";

/**
 * Whether a folder's entries make it a git folder as git decides (setup.c's is_git_directory): a
 * `HEAD` with `objects`, or with a `commondir` naming the folder that holds them — a `config` is
 * not needed, and git runs the hooks of a folder without one.
 */
export const isGitDir = (names: ReadonlySet<string>) =>
  names.has("HEAD") && (names.has("objects") || names.has("commondir"));

/** Whether a link leads somewhere (not nowhere, not round in a loop). */
export const resolves = (p: string) => {
  try {
    realpathSync(p);
    return true;
  } catch {
    return false;
  }
};

/** A path in the workspace, workspace-relative with `/`, or undefined when it leads out. */
export function inWorkspace(workspace: string, real: string): string | undefined {
  const inside = path.relative(workspace, real);
  if (inside.startsWith("..") || path.isAbsolute(inside)) return undefined;
  return inside === "" ? "." : inside.split(path.sep).join("/");
}

/**
 * The repository a `.git` file (`gitdir: <path>`, read as git's setup.c reads it: only the line
 * ends stripped) or a `.git` link sends git to, when it is a folder in the workspace.
 */
export function gitFileTarget(workspace: string, rel: string, link: boolean): string | undefined {
  try {
    const at = path.join(workspace, rel);
    let target = at;
    // a link to a gitdir file is read as that file (git follows it)
    if (!link || !lstatOf(realpathSync(at))?.isDirectory()) {
      const text = readSmall(at);
      if (!text?.startsWith("gitdir: ")) return undefined;
      target = path.resolve(path.dirname(at), text.slice(8).replace(/[\r\n]+$/, ""));
    }
    const real = realpathSync(target);
    return lstatOf(real)?.isDirectory() ? inWorkspace(workspace, real) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The workspace-relative folder a git folder's `commondir` names, when it is in the workspace. Read
 * as git reads it (setup.c): only the line ends are stripped, so `" x"` names the folder ` x`.
 */
export function commonDirOf(workspace: string, rel: string): string | undefined {
  try {
    const gitDir = path.join(workspace, rel);
    const named = readSmall(path.join(gitDir, "commondir"))?.replace(/[\r\n]+$/, "");
    if (named === undefined) return undefined;
    const real = realpathSync(path.resolve(gitDir, named));
    return lstatOf(real)?.isDirectory() ? inWorkspace(workspace, real) : undefined;
  } catch {
    return undefined;
  }
}
