/**
 * The one door for the files keel itself opens in a workspace — AGENTS.md, `.gitignore`,
 * `.mcp.json`, the project's settings, the analyst's report and the files it reads, the file
 * tools' targets, undo's snapshots and restores. A workspace is anyone's: a cloned repository or a
 * command can leave a link, a FIFO or a device under any name, and keel must neither follow it
 * out nor wait on it. Through this door:
 *
 * - no link is followed: not the file (`O_NOFOLLOW`), not a folder on the way from the root;
 * - only a regular file is read or replaced: a FIFO, socket or device is refused at once (opened
 *   with `O_NONBLOCK`, then the stat of what was opened decides), never waited on;
 * - a read is bounded (`maxBytes`);
 * - a write goes to a new file in the same real folder, renamed over the name: never through a
 *   link, never into the other names of a hard-linked file, never seen half-written.
 *
 * `readSmall` is the other way in, for the sandbox's look at what git will read: links followed (as
 * git follows them), still bounded and never blocking.
 */
import { randomBytes } from "node:crypto";
import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
} from "node:fs";
import { open, rename, rm, type FileHandle } from "node:fs/promises";
import path from "node:path";

/** The most a small file keel reads for itself may hold (settings, `.mcp.json`, a git file). */
export const MAX_READ = 1 << 20;

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

export type RefusalReason = "link" | "not_file" | "too_large" | "outside" | "read_only";

/** A file the door will not open, with why; its message names the file and says what it is. */
export class FileRefused extends Error {
  override name = "FileRefused";
  constructor(
    readonly file: string,
    readonly reason: RefusalReason,
    detail: string,
  ) {
    super(`${file} ${detail}`);
  }
}

/** What a path is when it is not a regular file or a folder (a FIFO, a socket, a device), or null. */
export function notRegular(st: Stats): string | null {
  if (st.isFile() || st.isDirectory()) return null;
  if (st.isSymbolicLink()) return "a symbolic link";
  if (st.isFIFO()) return "a named pipe (FIFO)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  return "not a regular file";
}

/**
 * An entry's own stats, or none when it is missing or cannot be looked at: a command can make a
 * file of a folder on the way (ENOTDIR), a folder no one may enter (EACCES) or a link loop (ELOOP).
 */
export const lstatOf = (p: string): Stats | undefined => {
  try {
    return lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
};

/** `rel` as its parts; one that climbs out or is absolute is refused. */
function partsOf(root: string, rel: string): string[] {
  const parts = rel.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  if (path.isAbsolute(rel) || parts.includes("..") || parts.length === 0)
    throw new FileRefused(path.join(root, rel), "outside", `is not a file inside ${root}`);
  return parts;
}

/**
 * The real folder of `rel` under `root`, walked one folder at a time without following a link
 * (`makeParents`: missing folders are made). Undefined when a folder on the way is missing.
 */
function folderOf(root: string, parts: readonly string[], makeParents = false): string | undefined {
  let dir = realpathSync(root);
  for (const part of parts.slice(0, -1)) {
    const next = path.join(dir, part);
    let st = lstatOf(next);
    if (!st && makeParents) {
      try {
        mkdirSync(next);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      st = lstatOf(next);
    }
    if (!st) return undefined;
    if (st.isSymbolicLink())
      throw new FileRefused(next, "link", "is a symbolic link; keel does not follow it");
    if (!st.isDirectory())
      throw new FileRefused(next, "not_file", `is ${notRegular(st) ?? "a file"}, not a folder`);
    dir = next;
  }
  return dir;
}

/** Where the kernel says an open file is (Linux), to catch a link swapped in after the walk. */
function openedAt(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** The refusal for what was opened, or for a link's ELOOP; none for a regular file within `max`. */
function refusal(file: string, st: Stats, fd: number, max: number): FileRefused | undefined {
  if (!st.isFile())
    return new FileRefused(
      file,
      "not_file",
      `is ${notRegular(st) ?? "a folder"}, not a regular file`,
    );
  if (st.size > max)
    return new FileRefused(file, "too_large", `is ${st.size} bytes, more than ${max} keel reads`);
  const at = openedAt(fd);
  if (at !== undefined && at !== file)
    return new FileRefused(file, "link", `led elsewhere (${at}) while keel opened it`);
  return undefined;
}

const linkRefusal = (file: string, e: unknown) =>
  (e as NodeJS.ErrnoException).code === "ELOOP" || (e as NodeJS.ErrnoException).code === "EMLINK"
    ? new FileRefused(file, "link", "is a symbolic link; keel does not follow it")
    : e;

const missing = (e: unknown) =>
  (e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR";

export interface OpenOptions {
  /** The largest file opened (default `MAX_READ`); a larger one is refused as `too_large`. */
  maxBytes?: number;
}

/**
 * Opens `root`/`rel` for reading through the door (see the module comment): the handle and its
 * stats, or undefined when there is no such file. Throws `FileRefused` for a link, a file that is
 * not regular, or one larger than `maxBytes`. The caller closes the handle.
 */
export async function openIn(
  root: string,
  rel: string,
  opts: OpenOptions = {},
): Promise<{ fh: FileHandle; st: Stats } | undefined> {
  const parts = partsOf(root, rel);
  const dir = folderOf(root, parts);
  if (dir === undefined) return undefined;
  const file = path.join(dir, parts.at(-1)!);
  let fh: FileHandle;
  try {
    fh = await open(file, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (e) {
    if (missing(e)) return undefined;
    throw linkRefusal(file, e);
  }
  try {
    const st = await fh.stat();
    const refused = refusal(file, st, fh.fd, opts.maxBytes ?? MAX_READ);
    if (refused) throw refused;
    return { fh, st };
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/** `root`/`rel`'s bytes through the door (see `openIn`); undefined when there is no such file. */
export async function readIn(
  root: string,
  rel: string,
  opts: OpenOptions = {},
): Promise<Buffer | undefined> {
  const opened = await openIn(root, rel, opts);
  if (!opened) return undefined;
  try {
    return await opened.fh.readFile();
  } finally {
    await opened.fh.close();
  }
}

/** `readIn` for callers that cannot wait (settings, `.mcp.json`): the same door, synchronously. */
export function readInSync(root: string, rel: string, opts: OpenOptions = {}): Buffer | undefined {
  const parts = partsOf(root, rel);
  const dir = folderOf(root, parts);
  if (dir === undefined) return undefined;
  const file = path.join(dir, parts.at(-1)!);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (e) {
    if (missing(e)) return undefined;
    throw linkRefusal(file, e);
  }
  try {
    const max = opts.maxBytes ?? MAX_READ;
    const st = fstatSync(fd);
    const refused = refusal(file, st, fd, max);
    if (refused) throw refused;
    return readAll(fd, Number.isFinite(max) ? max : st.size);
  } finally {
    closeSync(fd);
  }
}

/** An open file's bytes, at most `max` (a file that grew past it since its stat is refused). */
function readAll(fd: number, max: number): Buffer {
  const buf = Buffer.alloc(max + 1);
  let n = 0;
  for (let got = 1; got > 0 && n <= max; n += got) got = readSync(fd, buf, n, buf.length - n, null);
  if (n > max) throw new FileRefused(`fd ${fd}`, "too_large", `grew past ${max} bytes`);
  return buf.subarray(0, n);
}

/**
 * Writes `data` to `root`/`rel` through the door: into a new file beside it, renamed over the name.
 * An existing file keeps its permissions; `makeParents` makes missing folders on the way. Throws
 * `FileRefused` when the name or a folder on the way is a link, or the name is not a regular file.
 */
export async function writeIn(
  root: string,
  rel: string,
  data: string | Uint8Array,
  opts: { makeParents?: boolean } = {},
): Promise<void> {
  const parts = partsOf(root, rel);
  const dir = folderOf(root, parts, opts.makeParents);
  if (dir === undefined)
    throw Object.assign(new Error(`${path.join(root, rel)}: its folder does not exist`), {
      code: "ENOENT",
    });
  const name = parts.at(-1)!;
  const file = path.join(dir, name);
  const st = lstatOf(file);
  if (st?.isSymbolicLink())
    throw new FileRefused(file, "link", "is a symbolic link; keel does not write through it");
  if (st && !st.isFile())
    throw new FileRefused(
      file,
      "not_file",
      `is ${notRegular(st) ?? "a folder"}, not a regular file`,
    );
  // a read-only file stays so: a new file renamed over it would not ask the file's permissions
  if (st && (st.mode & 0o222) === 0)
    throw new FileRefused(file, "read_only", "is read-only; keel does not replace it");
  if (st) accessSync(file, constants.W_OK);
  const tmp = path.join(dir, `.${name.slice(0, 100)}.keel-${randomBytes(6).toString("hex")}`);
  const mode = st ? st.mode & 0o7777 : 0o666;
  try {
    const fh = await open(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW,
      mode,
    );
    try {
      await fh.writeFile(data);
      if (st) await fh.chmod(mode); // exactly the old mode, whatever the umask
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/** Folders of the kernel's and devices' files, never read. */
const KERNEL = /^\/(proc|sys|dev)(\/|$)/;

/**
 * A small regular file's text, links followed (what git reads, for the sandbox's look), or none: not
 * a FIFO, device or kernel file (`/proc/kmsg` says it is a regular empty file, then blocks and
 * drains what it reads), not larger than `MAX_READ`, nothing that cannot be read.
 */
export function readSmall(file: string): string | undefined {
  let fd: number | undefined;
  try {
    if (KERNEL.test(realpathSync(file))) return undefined;
    fd = openSync(file, constants.O_RDONLY | O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_READ) return undefined;
    return readAll(fd, MAX_READ).toString("utf8");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether a file is a small regular one `readSmall` would read (git may be given it to read). */
export const isSmallFile = (file: string): boolean => readSmall(file) !== undefined;
