/**
 * Writing a workspace file so that the write reaches that name only. A file with other hard links
 * shares its content with every name: a command can link the `.git/config` of a repository it made
 * to `notes.ini`, and a write to `notes.ini` would then write git's config. Such a file is replaced
 * by a new one (written beside it, then renamed over it); the other names keep what they had.
 */
import { randomBytes } from "node:crypto";
import { chmod, lstat, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/** Writes `data` to the file at `abs` (see the module comment). */
export async function writeOwnFile(abs: string, data: string | Uint8Array): Promise<void> {
  const st = await lstat(abs).catch(() => undefined);
  if (!st?.isFile() || st.nlink <= 1) return writeFile(abs, data);
  const tmp = path.join(
    path.dirname(abs),
    `.${path.basename(abs)}.keel-${randomBytes(6).toString("hex")}`,
  );
  try {
    await writeFile(tmp, data, { flag: "wx" });
    await chmod(tmp, st.mode & 0o7777);
    await rename(tmp, abs);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
