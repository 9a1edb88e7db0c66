/**
 * Writing a workspace file so that the write reaches that name only. A file with other hard links
 * shares its content with every name: a command can link the `.git/config` of a repository it made
 * to `notes.ini`, and a write to `notes.ini` would then write git's config. Such a file is replaced
 * by a new one (written beside it, then renamed over it); the other names keep what they had.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { chmod, lstat, open, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/** Writes `data` to the file at `abs` (see the module comment). */
export async function writeOwnFile(abs: string, data: string | Uint8Array): Promise<void> {
  const st = await lstat(abs).catch(() => undefined);
  if (!st?.isFile() || st.nlink <= 1) return writeRegular(abs, data);
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

/**
 * Writes a regular file (created when missing). The open does not block (O_NONBLOCK): a FIFO at the
 * path, with no reader, fails at once rather than waiting for one for ever; one with a reader, a
 * socket or a device, is refused by the stat of what was opened.
 */
async function writeRegular(abs: string, data: string | Uint8Array): Promise<void> {
  const flags =
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NONBLOCK ?? 0);
  const fh = await open(abs, flags, 0o666);
  try {
    if (!(await fh.stat()).isFile())
      throw new Error(`${path.basename(abs)} is not a regular file; nothing was written`);
    await fh.writeFile(data);
  } finally {
    await fh.close();
  }
}
