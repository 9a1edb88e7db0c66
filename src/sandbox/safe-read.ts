/**
 * Reading files a sandboxed command may have made, without waiting on them: a FIFO or a device
 * blocks an open or a read until something writes to it (keel would hang), and a kernel file under
 * `/proc` (`/proc/kmsg`, which says it is a regular empty file) blocks and drains what it reads.
 * Used by the look and aftercare (a `.git` file, `commondir`, configs) and git-named (includes).
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
} from "node:fs";

/** The most a git file keel reads may hold: a `.git` file, `commondir`, a config. */
export const MAX_READ = 1 << 20;

/** Folders of the kernel's and devices' files, never read. */
const KERNEL = /^\/(proc|sys|dev)(\/|$)/;

/**
 * A small regular file's text (through links, as git reads it), or none: not a FIFO, device or
 * kernel file, not larger than `MAX_READ`, nothing that cannot be read.
 */
export function readSmall(file: string): string | undefined {
  let fd: number | undefined;
  try {
    if (KERNEL.test(realpathSync(file))) return undefined;
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_READ) return undefined;
    const buf = Buffer.alloc(MAX_READ + 1);
    let n = 0;
    for (let got = 1; got > 0 && n <= MAX_READ; n += got)
      got = readSync(fd, buf, n, buf.length - n, null);
    return n > MAX_READ ? undefined : buf.subarray(0, n).toString("utf8");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether a file is a small regular one `readSmall` would read (git may be given it to read). */
export const isSmallFile = (file: string): boolean => readSmall(file) !== undefined;

/**
 * An entry's own stats, or none when it is missing or cannot be looked at: a command can make a
 * file of a folder on the way (ENOTDIR), a folder no one may enter (EACCES) or a link loop (ELOOP),
 * and the look must not stop there.
 */
export const lstatOf = (p: string) => {
  try {
    return lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
};
