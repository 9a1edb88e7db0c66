/**
 * git's plumbing output as keel reads it (git-plants.ts), pure: `git log --raw -z`, `git ls-files -s
 * -z`, `git ls-tree -z`, and a blob's id.
 */
import { createHash } from "node:crypto";

/** A path a commit or the index holds: its mode and object id. */
export interface Held {
  path: string;
  mode: string;
  id: string;
}

/**
 * `git log --format=%x01%H -m --root --raw -z --no-abbrev`: per commit, the paths it adds or
 * changes (deletions left out), with their new mode and id.
 */
export function parseRawLog(out: string): Array<Held & { commit: string }> {
  const held: Array<Held & { commit: string }> = [];
  for (const record of out.split("\x01")) {
    const fields = record.split("\0");
    const commit = fields[0]!.trim();
    for (let i = 1; i + 1 < fields.length; i++) {
      const meta = fields[i]!.trim();
      if (!meta.startsWith(":")) continue;
      const [, mode, , id, status] = meta.slice(1).split(" ");
      const file = fields[++i]!;
      if (mode && id && status && !status.startsWith("D") && !/^0+$/.test(id))
        held.push({ commit, path: file, mode, id });
    }
  }
  return held;
}

/**
 * NUL-separated `<fields>\t<path>` records, as `git ls-files -s -z` (`mode id stage`) and
 * `git ls-tree -z` (`mode type id`) print them: each entry's path, mode and id, the id being field
 * `idAt`.
 */
function tabbed(out: string, idAt: number): Held[] {
  return out
    .split("\0")
    .filter((line) => line.includes("\t"))
    .map((line) => {
      const tab = line.indexOf("\t");
      const fields = line.slice(0, tab).split(" ");
      return { path: line.slice(tab + 1), mode: fields[0]!, id: fields[idAt]! };
    });
}

/** `git ls-files -s -z`: each entry's path, mode and id. */
export const parseLsFiles = (out: string): Held[] => tabbed(out, 1);

/** `git ls-tree -z`: each entry's path, mode and id. */
export const parseLsTree = (out: string): Held[] => tabbed(out, 2);

/**
 * git's id of content as a blob (`git hash-object`), computed here: comparing needs no process. In
 * the repository's hash, which its ids' length says (SHA-1 unless 64).
 */
export const blobId = (bytes: Buffer, idLength = 40) =>
  createHash(idLength === 64 ? "sha256" : "sha1")
    .update(`blob ${bytes.length}\0`)
    .update(bytes)
    .digest("hex");
