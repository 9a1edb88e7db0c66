/**
 * A repository's refs and index as they stand. The look around every command reads them without
 * git (`gitState`): HEAD's text, every ref's object id (a loose ref over a packed one), the
 * pseudo-refs a person's git may be pointed at (`git reset --hard ORIG_HEAD`), a stamp of the
 * index, and a stamp of every file refs live in — any write a command makes there changes it, even
 * one keel's reading does not understand (git accepts refs keel's parser need not). When the stamps
 * differ, aftercare asks git itself what the refs are now (`gitStateByGit`), and a repository keel
 * cannot read so (a reftable) is read by git in the look too. Never through a link.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { runGit } from "./host-git.js";
import { lstatOf, readSmall } from "./safe-read.js";

export interface GitState {
  /** HEAD's text, trimmed: `ref: refs/heads/main`, or an object id when detached. */
  head: string;
  /** Every ref (`refs/heads/main`, `refs/stash`…) and pseudo-ref (`ORIG_HEAD`) with its object id. */
  refs: Map<string, string>;
  /** The index file's inode, size and ctime (no command can set a ctime back); `none` without one. */
  index: string;
  /** Every file refs and reflogs live in (HEAD, packed-refs, pseudo-refs, `refs/`, `logs/`), each's stat. */
  stamp: string;
  /** The commits the reflogs name (`git checkout -`, `git stash pop stash@{1}` check one out), by reflog file. */
  reflogs: Map<string, Set<string>>;
}

/** Refs read at most without git; a repository with more is read by git. */
export const MAX_REFS = 100_000;

/** The pseudo-refs a person's git command may name (`git reset --hard ORIG_HEAD`, `git merge FETCH_HEAD`). */
export const PSEUDO_REFS = [
  "ORIG_HEAD",
  "FETCH_HEAD",
  "MERGE_HEAD",
  "CHERRY_PICK_HEAD",
  "REVERT_HEAD",
  "BISECT_HEAD",
  "AUTO_MERGE",
];

/** An object id as git reads one at the start of a ref file's text (any case; what follows ignored). */
export const idIn = (text: string): string | undefined =>
  /^([0-9a-fA-F]{64}|[0-9a-fA-F]{40})(?![0-9a-fA-F])/.exec(text.trim())?.[1]?.toLowerCase();

/** The refs a `packed-refs` file lists (its comments and peeled `^` lines left out). */
export function packedRefs(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const [first, name] = line.trim().split(/\s+/);
    const id = first === undefined ? undefined : idIn(first);
    if (id && name && !first!.startsWith("^")) out.set(name, id);
  }
  return out;
}

/** The stat of a file, as text: anything that rewrites it changes it. */
const statOf = (p: string) => {
  const st = lstatOf(p);
  return st ? `${st.mode}:${st.ino}:${st.size}:${st.ctimeMs}` : "-";
};

/** The stamp of every file refs live in, and the loose refs keel understands (none: too many). */
function looseRefs(gitDir: string) {
  const parts: string[] = ["HEAD", "packed-refs", ...PSEUDO_REFS, "reftable"].map(
    (n) => `${n}=${statOf(path.join(gitDir, n))}`,
  );
  const refs = new Map<string, string>();
  let budget = MAX_REFS;
  const walk = (rel: string): boolean => {
    let entries;
    try {
      entries = readdirSync(path.join(gitDir, rel), { withFileTypes: true });
    } catch {
      return true;
    }
    for (const e of entries) {
      if (--budget < 0) return false;
      const child = `${rel}/${e.name}`;
      parts.push(`${child}=${statOf(path.join(gitDir, child))}`);
      if (e.isDirectory()) {
        if (!walk(child)) return false;
      } else if (e.isFile()) {
        const id = idIn(readSmall(path.join(gitDir, child)) ?? "");
        if (id !== undefined) refs.set(child, id);
      }
    }
    return true;
  };
  const complete = walk("refs");
  return { stamp: parts.join("\n"), refs, complete };
}

/** The id git writes for "none" (a ref's creation or deletion). */
const ZERO = /^0+$/;

/** Reflog files read at most, and lines of each (a long reflog's oldest lines are not read). */
const MAX_REFLOGS = 10_000;

/**
 * The commits a reflog's lines name (`<old> <new> <who>\t<what>`): the new id, every full id in
 * the line, and the two names of a `checkout: moving from <a> to <b>` message (which
 * `git checkout -` resolves, an abbreviated id too), these as `rev:<name>` for git to resolve.
 */
export function reflogIds(text: string): Set<string> {
  const out = new Set<string>();
  for (const line of text.split("\n")) {
    const id = idIn(line.split(" ")[1] ?? "");
    if (id && !ZERO.test(id)) out.add(id);
    for (const [full] of line.matchAll(
      /(?<![0-9a-fA-F])[0-9a-fA-F]{40}(?:[0-9a-fA-F]{24})?(?![0-9a-fA-F])/g,
    ))
      if (!ZERO.test(full)) out.add(full.toLowerCase());
    const moving = /checkout: moving from (\S+) to (\S+)/.exec(line);
    for (const name of moving?.slice(1) ?? []) if (!idIn(name)) out.add(`rev:${name}`);
  }
  return out;
}

/** Every reflog (`logs/HEAD`, `logs/refs/...`) with its commits, and their files' stamp. */
function reflogsOf(gitDir: string) {
  const out = new Map<string, Set<string>>();
  const parts: string[] = [];
  let budget = MAX_REFLOGS;
  const walk = (rel: string) => {
    let entries;
    try {
      entries = readdirSync(path.join(gitDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (--budget < 0) return;
      const child = `${rel}/${e.name}`;
      parts.push(`${child}=${statOf(path.join(gitDir, child))}`);
      if (e.isDirectory()) walk(child);
      else if (e.isFile()) out.set(child, reflogIds(readSmall(path.join(gitDir, child)) ?? ""));
    }
  };
  walk("logs");
  return { reflogs: out, stamp: parts.join("\n") };
}

/** The pseudo-refs there are, each with its id (FETCH_HEAD: its first line's, what git takes). */
function pseudoRefs(gitDir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of PSEUDO_REFS) {
    const id = idIn(readSmall(path.join(gitDir, name)) ?? "");
    if (id !== undefined) out.set(name, id);
  }
  return out;
}

const indexStamp = (gitDir: string) => {
  const st = lstatOf(path.join(gitDir, "index"));
  return st ? `${st.ino}:${st.size}:${st.ctimeMs}` : "none";
};

/**
 * A git folder's state read without git (see the module's comment), or none when keel cannot read
 * it so: a reftable, more than `MAX_REFS`, an unreadable `packed-refs` or HEAD.
 */
export function gitState(gitDir: string): GitState | undefined {
  if (lstatOf(path.join(gitDir, "reftable"))) return undefined;
  const head = readSmall(path.join(gitDir, "HEAD"))?.trim();
  if (head === undefined) return undefined;
  const packedThere = lstatOf(path.join(gitDir, "packed-refs")) !== undefined;
  const packed = readSmall(path.join(gitDir, "packed-refs"));
  if (packedThere && packed === undefined) return undefined;
  const loose = looseRefs(gitDir);
  if (!loose.complete) return undefined;
  const refs = packed === undefined ? new Map<string, string>() : packedRefs(packed);
  for (const [name, id] of loose.refs) refs.set(name, id);
  for (const [name, id] of pseudoRefs(gitDir)) refs.set(name, id);
  const logs = reflogsOf(gitDir);
  return {
    head,
    refs,
    index: indexStamp(gitDir),
    stamp: `${loose.stamp}\n${logs.stamp}`,
    reflogs: logs.reflogs,
  };
}

/**
 * The state as git itself reads it (every ref `for-each-ref` lists, HEAD resolved, the pseudo-refs),
 * for a repository keel cannot read and after a command changed where refs live. None when git did
 * not answer within `timeoutMs`.
 */
export function gitStateByGit(
  gitDir: string,
  cwd: string,
  timeoutMs: number,
): GitState | undefined {
  const deadline = Date.now() + timeoutMs;
  const git = (args: string[]) =>
    runGit(cwd, args, deadline - Date.now(), { env: { GIT_DIR: gitDir } }).stdout;
  const list = git(["for-each-ref", "--format=%(objectname) %(refname)"]);
  if (list === undefined) return undefined;
  const refs = new Map<string, string>();
  for (const line of list.split("\n")) {
    const space = line.indexOf(" ");
    if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
  }
  for (const [name, id] of pseudoRefs(gitDir)) refs.set(name, id);
  const symbolic = git(["symbolic-ref", "-q", "HEAD"])?.trim();
  const id = symbolic ? undefined : git(["rev-parse", "--verify", "-q", "HEAD"])?.trim();
  const head = symbolic ? `ref: ${symbolic}` : (id ?? readSmall(path.join(gitDir, "HEAD"))?.trim());
  if (head === undefined) return undefined;
  const logs = reflogsOf(gitDir);
  return {
    head,
    refs,
    index: indexStamp(gitDir),
    stamp: `${looseRefs(gitDir).stamp}\n${logs.stamp}`,
    reflogs: logs.reflogs,
  };
}

/** Whether nothing refs or the index live in changed between two looks. */
export const unchanged = (a: GitState, b: GitState) => a.stamp === b.stamp && a.index === b.index;
