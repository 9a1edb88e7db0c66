/**
 * Objects a command forged in a repository's object store: git names a loose object by the hash of
 * its content, but reads it without checking, so a command that overwrites the person's object in
 * place (`.vscode/settings.json`'s blob) makes the person's next `git checkout` write what the
 * command chose, with no ref or index changed. After a command, every loose object written since
 * the look before it is hashed again, and one whose content is not what its name says — or that is
 * a link — is removed (git then reports the object missing instead of writing a forgery); so is an
 * `alternates` file it made or changed, which sends git for a missing object to a folder the
 * command filled. Packs are not checked (git checks a pack's own checksum when it indexes it; one a
 * command hand-crafts is not covered).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { inflateSync } from "node:zlib";
import { lstatOf } from "./safe-read.js";

/** Bytes of loose objects hashed at most after one command; past them the rest is not checked. */
const MAX_BYTES = 256 << 20;
/** How long one repository's check may take. */
const MAX_MS = 3_000;

/** The id git gives an object's inflated bytes (`<type> <size>\0<content>`), in the name's hash. */
const idOf = (inflated: Buffer, length: number) =>
  createHash(length === 64 ? "sha256" : "sha1")
    .update(inflated)
    .digest("hex");

/**
 * Removes the loose objects in `gitDir` written since `since` (ms since the epoch) whose content is
 * not what their name says, and an `alternates` file written since; returns what it did.
 */
export function removeForgedObjects(gitDir: string, since: number, shown: string): string[] {
  const objects = path.join(gitDir, "objects");
  if (!lstatOf(objects)?.isDirectory()) return [];
  const done: string[] = [];
  for (const name of ["alternates", "http-alternates"]) {
    const file = path.join(objects, "info", name);
    if ((lstatOf(file)?.ctimeMs ?? -Infinity) >= since) {
      rmSync(file, { force: true });
      done.push(
        `objects/info/${name} in ${shown} (made or changed by the command: removed; it sends git to another folder for objects, where a later checkout would take what the command put there)`,
      );
    }
  }
  const deadline = Date.now() + MAX_MS;
  let budget = MAX_BYTES;
  let forged = 0;
  let unchecked = false;
  for (const dir of safeList(objects).filter((d) => /^[0-9a-f]{2}$/.test(d))) {
    for (const file of safeList(path.join(objects, dir))) {
      const abs = path.join(objects, dir, file);
      const st = lstatOf(abs);
      if (!st || st.ctimeMs < since || !/^[0-9a-f]{38}([0-9a-f]{24})?$/.test(file)) continue;
      if (budget < st.size || Date.now() > deadline) {
        unchecked = true;
        continue;
      }
      budget -= st.size;
      let ok: boolean;
      try {
        ok = st.isFile() && idOf(inflateSync(readFileSync(abs)), file.length + 2) === dir + file;
      } catch {
        ok = false; // not a zlib stream git can read: git would fail on it as well
      }
      if (!ok) {
        rmSync(abs, { force: true });
        forged++;
      }
    }
  }
  if (forged > 0)
    done.push(
      `${forged} object${forged === 1 ? "" : "s"} in ${shown}/objects (written by the command with content their names do not say: removed; a later checkout would have written it)`,
    );
  if (unchecked)
    done.push(
      `(keel did not check every object the command wrote in ${shown}: too many; run git fsck there before you check out)`,
    );
  return done;
}

const safeList = (dir: string): string[] => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};
