/**
 * What the look reads of one git folder, as git reads it: whether a folder is one, where a `.git`
 * file or a `commondir` sends git, and a fingerprint of what can make git run a program (configs,
 * hooks, links). Never throws; never follows a link out of the workspace.
 */
import { createHash } from "node:crypto";
import { readdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { lstatOf, readSmall } from "./safe-read.js";

/** A repository's files that can make git run a program (its hooks are a folder beside them). */
export const CONFIGS = ["config", "config.worktree"];

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
 * The workspace-relative folder a git folder's `commondir` (its text, as the look read it) names,
 * when it is in the workspace. Read as git reads it (setup.c): only the line ends are stripped, so
 * `" x"` names the folder ` x`.
 */
export function commonDirOf(
  workspace: string,
  rel: string,
  text: string | undefined,
): string | undefined {
  try {
    const gitDir = path.join(workspace, rel);
    const named = text?.replace(/[\r\n]+$/, "");
    if (named === undefined) return undefined;
    const real = realpathSync(path.resolve(gitDir, named));
    return lstatOf(real)?.isDirectory() ? inWorkspace(workspace, real) : undefined;
  } catch {
    return undefined;
  }
}

/** A git folder's configs (their texts, in `CONFIGS` order), hooks and commondir, hashed: any change shows. */
export function fingerprint(
  gitDir: string,
  configs: (string | undefined)[],
  hooks: Record<string, string>,
  common: string | undefined,
): string {
  const h = createHash("sha1");
  CONFIGS.forEach((name, i) => h.update(`\0${name}\0${configs[i] ?? "none"}`));
  h.update(`\0commondir\0${common ?? "none"}`);
  for (const [name, stamp] of Object.entries(hooks)) h.update(`\0${name}\0${stamp}`);
  for (const name of linksOf(gitDir)) h.update(`\0link ${name}`);
  return h.digest("hex");
}

/**
 * A git folder's hooks (`hooksOf`), each with a stamp that any write to it changes: its inode,
 * size and ctime (which no command can set back). A command that rewrites a hook the sandbox did
 * not hold (past `MAX_HELD`) keeps its name, not its stamp.
 */
export function hookStamps(gitDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of hooksOf(gitDir)) {
    const st = lstatOf(path.join(gitDir, "hooks", name));
    out[name] = st ? `${st.ino}:${st.size}:${st.ctimeMs}` : "gone";
  }
  return out;
}

/**
 * A git folder's hooks, git's samples left out; none when `hooks` is not a real folder (a link is
 * never followed: keel would list, and then remove, whatever it leads to — outside the workspace too).
 */
export const hooksOf = (gitDir: string): string[] => {
  const hooks = path.join(gitDir, "hooks");
  if (!lstatOf(hooks)?.isDirectory()) return [];
  try {
    return readdirSync(hooks)
      .filter((n) => !n.endsWith(".sample"))
      .sort();
  } catch {
    return [];
  }
};

/**
 * Which of a git folder's hooks folder and configs are links: symbolic (git follows them), or a
 * config hard-linked to another name (a file tool writing that name would write the config).
 */
export const linksOf = (gitDir: string): string[] =>
  ["hooks", ...CONFIGS].filter((n) => {
    const st = lstatOf(path.join(gitDir, n));
    return st !== undefined && (st.isSymbolicLink() || (st.isFile() && st.nlink > 1));
  });

/**
 * What git makes at a git folder's top level (git-lfs, git-annex, git-crypt and git-filter-repo
 * keep data there too): its parts, pseudo-refs and state files (`ORIG_HEAD`, `BISECT_LOG`: upper
 * case), locks, a split index's shared files.
 */
const GIT_OWN = new Set([
  ...["HEAD", "config", "config.worktree", "description", "hooks", "info", "objects", "refs"],
  ...["logs", "index", "packed-refs", "shallow", "commondir", "gitdir", "worktrees", "modules"],
  ...["branches", "remotes", "rr-cache", "svn", "gc.pid", "gc.log", "fsmonitor--daemon.ipc"],
  ...["lfs", "annex", "git-crypt", "gitk.cache", "filter-repo"],
]);

/** The state an unfinished rebase, `git am`, cherry-pick or revert leaves in a git folder. */
export const GIT_STATE = ["rebase-merge", "rebase-apply", "sequencer"];

/**
 * Why aftercare removes an entry a command added at a git folder's top level (none: it stays):
 * another tool's file, which git does not make there and which that tool reads as the
 * repository's config (lazygit runs the pager its `lazygit.yml` names); or an unfinished
 * rebase's, am's, cherry-pick's or revert's state, whose todo's `exec` lines the person's
 * `git rebase --continue` would run outside the sandbox.
 */
export function leftInGitDir(name: string): string | undefined {
  if (GIT_STATE.includes(name))
    return "an unfinished rebase or cherry-pick the command left: `git rebase --continue` would run its todo's exec lines; HEAD stays where it stopped";
  if (GIT_OWN.has(name) || /^[A-Z][A-Z0-9_]*$/.test(name) || /\.lock$|^sharedindex\./.test(name))
    return undefined;
  return "git does not make it; another tool reads it from there as the repository's config (lazygit runs the pager its lazygit.yml names)";
}

/** A git folder's entries at its top level (none when it cannot be read). */
export const entriesOf = (gitDir: string): string[] => {
  try {
    return readdirSync(gitDir);
  } catch {
    return [];
  }
};
