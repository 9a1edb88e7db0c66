/**
 * A repository's refs and index as they stand, read without git (the look runs around every
 * command): HEAD's text, every ref's object id (a loose ref over a packed one) and a stamp of the
 * index that any write to it changes. Aftercare compares the two looks to find what a command
 * committed or staged (git-plants.ts). Never through a link; a repository that keeps its refs in a
 * reftable, or has more than `MAX_REFS`, is not read.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { lstatOf, readSmall } from "./safe-read.js";

export interface GitState {
  /** HEAD's text, trimmed: `ref: refs/heads/main`, or an object id when detached. */
  head: string;
  /** Every ref (`refs/heads/main`, `refs/stash`…) with the object id it names. */
  refs: Map<string, string>;
  /** The index file's inode, size and ctime (no command can set a ctime back); `none` without one. */
  index: string;
}

/** Refs read at most; a repository with more is not read (its refs are not known). */
export const MAX_REFS = 100_000;

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** The refs a `packed-refs` file lists (its comments and peeled `^` lines left out). */
export function packedRefs(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const [id, name] = line.trim().split(" ");
    if (id && name && OID.test(id)) out.set(name, id);
  }
  return out;
}

/** A git folder's state (see the module's comment), or none when it cannot be read so. */
export function gitState(gitDir: string): GitState | undefined {
  if (lstatOf(path.join(gitDir, "reftable"))?.isDirectory()) return undefined;
  const head = readSmall(path.join(gitDir, "HEAD"))?.trim();
  if (head === undefined) return undefined;
  const packed = readSmall(path.join(gitDir, "packed-refs"));
  const refs = packed === undefined ? new Map<string, string>() : packedRefs(packed);
  let budget = MAX_REFS - refs.size;
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
      if (e.isDirectory()) {
        if (!walk(child)) return false;
      } else if (e.isFile()) {
        const id = readSmall(path.join(gitDir, child))?.trim();
        if (id !== undefined && OID.test(id)) refs.set(child, id);
      }
    }
    return true;
  };
  if (budget < 0 || !walk("refs")) return undefined;
  const st = lstatOf(path.join(gitDir, "index"));
  return { head, refs, index: st ? `${st.ino}:${st.size}:${st.ctimeMs}` : "none" };
}
