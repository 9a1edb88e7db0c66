/**
 * The file tools: read_file, write_file, list_dir, make_dir (edit_file has its own module). Each validates its input,
 * resolves every path through the workspace sandbox and answers with a result or a typed failure.
 */
import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { mkdir, readdir, realpath, stat, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { notRegular, openIn, writeIn } from "../files/door.js";
import { hiddenNameRefusal, resolveInWorkspace } from "./workspace-path.js";
import { defineTool, fail, ok, type ToolResult } from "./types.js";

export const PathArg = z.string().describe("Path relative to the workspace root, e.g. src/app.ts");

/**
 * Resolves a path the model gave, or hands back the refusal as a tool failure: outside the
 * workspace (`resolveInWorkspace`), or a name with a control character (`hiddenNameRefusal`).
 */
export function sandboxed(
  workspace: string,
  p: string,
): { abs: string; rel: string } | { failure: ToolResult } {
  const hidden = typeof p === "string" ? hiddenNameRefusal(p) : undefined;
  if (hidden) return { failure: fail("invalid_arguments", hidden) };
  const r = resolveInWorkspace(workspace, p);
  return r.ok ? r : { failure: fail(r.kind, r.message) };
}

/** A file content's fingerprint, for "has it changed since the thread saw it". */
export const contentHash = (text: string) =>
  createHash("sha256").update(text).digest("hex").slice(0, 16);

export async function statOrNull(abs: string) {
  try {
    return await stat(abs);
  } catch {
    return null;
  }
}

/** The workspace-relative path a file tool's call names (none when it is outside). */
export function pathOf(workspace: string, p: string): string[] {
  const r = resolveInWorkspace(workspace, p);
  return r.ok ? [r.rel] : [];
}

export { notRegular };

/** The refusal for a path that is not a regular file (see notRegular). */
export function notAFile(tool: string, rel: string, what: string): ToolResult {
  return fail(
    "refused",
    `${tool}: ${rel} is ${what}, not a regular file; the file tools only read and write regular files.`,
  );
}

/**
 * Opens a regular file for reading through the door (`files/door.ts`): no link followed, a FIFO
 * put at the path after its stat opened at once (O_NONBLOCK) and refused by the stat of what was
 * opened. `abs` is a real path (`resolveInWorkspace`'s).
 */
export async function openRegular(abs: string): Promise<{ fh: FileHandle; st: Stats }> {
  const opened = await openIn(path.dirname(abs), path.basename(abs), { maxBytes: Infinity });
  if (!opened)
    throw Object.assign(new Error(`${path.basename(abs)} does not exist`), { code: "ENOENT" });
  return opened;
}

/**
 * A regular file's bytes, read without blocking (see openRegular); a link inside the workspace is
 * read as the file it names (the walks check that it lies inside).
 */
export async function readRegular(abs: string): Promise<Buffer> {
  const { fh } = await openRegular(await realpath(abs));
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/** Files larger than this are not read whole: read_file reads the lines asked for, edit_file refuses. */
export const WHOLE_READ_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Lines `start` (0-based) to `start + count` of a file, read in chunks up to the last line asked
 * for and at most `maxBytes` of it: memory and time stay bounded whatever the file's size.
 */
export async function readLines(
  abs: string,
  start: number,
  count: number | undefined,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<{ bytes: Buffer; line: number; clipped: boolean; ended: boolean }> {
  const { fh } = await openRegular(abs);
  const end = count === undefined ? Infinity : start + count;
  const parts: Buffer[] = [];
  let kept = 0;
  let line = 0;
  let pos = 0;
  let clipped = false;
  let ended = false;
  try {
    const buf = Buffer.alloc(1 << 20);
    reading: while (!signal?.aborted) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) {
        ended = true;
        break;
      }
      pos += bytesRead;
      const chunk = buf.subarray(0, bytesRead);
      let from = 0;
      while (from < chunk.length) {
        const nl = chunk.indexOf(10, from);
        const stop = nl === -1 ? chunk.length : nl + 1;
        if (line >= start) {
          const take = Math.min(stop - from, maxBytes - kept);
          parts.push(Buffer.from(chunk.subarray(from, from + take)));
          kept += take;
          if (take < stop - from) {
            clipped = true;
            break reading;
          }
        }
        from = stop;
        if (nl !== -1 && ++line >= end) break reading;
      }
    }
  } finally {
    await fh.close();
  }
  return { bytes: Buffer.concat(parts), line, clipped, ended };
}

/** A file's text, and where it first is not UTF-8 (its bytes there show as U+FFFD in `text`). */
export async function readText(abs: string): Promise<{ text: string; notUtf8?: string }> {
  const { fh, st } = await openRegular(abs);
  let bytes: Buffer;
  try {
    // the file may have grown since the caller's stat
    if (st.size > WHOLE_READ_MAX_BYTES)
      throw new Error(`${path.basename(abs)} is ${st.size} bytes, too large to read whole`);
    bytes = await fh.readFile();
  } finally {
    await fh.close();
  }
  try {
    return { text: STRICT_UTF8.decode(bytes) };
  } catch {
    const at = firstNonUtf8(bytes);
    return {
      text: bytes.toString("utf8"),
      notUtf8: `byte 0x${bytes[at]!.toString(16).toUpperCase().padStart(2, "0")} at offset ${at}`,
    };
  }
}
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });
/** Where the first sequence that is not UTF-8 starts (the bytes `text` shows as U+FFFD). */
function firstNonUtf8(bytes: Buffer): number {
  // the longest prefix a streaming decoder takes without an error (one cut inside a sequence waits)
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  // the byte at `lo` breaks a sequence begun before it (0xE9 then a space) or is bad itself
  for (let k = lo - 1; k >= Math.max(0, lo - 3); k--) {
    const b = bytes[k]!;
    if ((b & 0xc0) === 0x80) continue;
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return k + length > lo ? k : lo;
  }
  return lo;
}

/** The message every read-only tool gives for a missing path (F3). */
export function missingPath(tool: string, rel: string): ToolResult {
  return fail(
    "not_found",
    `${tool}: ${rel} does not exist. To create it, call write_file with the path and the full content.`,
  );
}

export const readFileTool = defineTool({
  name: "read_file",
  description:
    "Read a text file from the workspace. Use offset/limit (line numbers) for big files.",
  toolClass: "explore",
  schema: z.object({
    path: PathArg,
    offset: z.number().int().min(1).optional().describe("First line to read, 1-based"),
    limit: z.number().int().min(1).optional().describe("How many lines to read"),
  }),
  async run({ path: p, offset, limit }, ctx) {
    const r = sandboxed(ctx.workspace, p);
    if ("failure" in r) return r.failure;
    const st = await statOrNull(r.abs);
    if (!st) return missingPath("read_file", r.rel);
    if (st.isDirectory()) {
      return fail(
        "wrong_tool",
        `read_file: ${r.rel} is a directory; call list_dir to see its entries.`,
      );
    }
    const what = notRegular(st);
    if (what) return notAFile("read_file", r.rel, what);
    if (st.size > WHOLE_READ_MAX_BYTES) return readPart(r.rel, r.abs, st.size, offset, limit, ctx);
    const { text, notUtf8 } = await readText(r.abs);
    const lines = text.split("\n");
    const start = (offset ?? 1) - 1;
    const end = limit ? start + limit : lines.length;
    let body = lines.slice(start, end).join("\n");
    let note =
      start > 0 || end < lines.length
        ? `[lines ${start + 1}-${Math.min(end, lines.length)} of ${lines.length}]\n`
        : "";
    if (notUtf8)
      note += `[${r.rel} is not UTF-8 text (${notUtf8}): such bytes show as \uFFFD. edit_file refuses it; change it with a command that keeps its encoding]\n`;
    if (body.length > ctx.outputLimit) {
      body = body.slice(0, ctx.outputLimit);
      note += `[truncated at ${ctx.outputLimit} characters; read further with offset/limit]\n`;
    }
    return { ...ok(note + body), seen: { [r.rel]: contentHash(text) } };
  },
});

/** read_file on a file too large to read whole: the lines asked for, up to the output limit. */
async function readPart(
  rel: string,
  abs: string,
  size: number,
  offset: number | undefined,
  limit: number | undefined,
  ctx: { outputLimit: number; signal?: AbortSignal },
): Promise<ToolResult> {
  const start = (offset ?? 1) - 1;
  const part = await readLines(abs, start, limit, ctx.outputLimit * 4, ctx.signal);
  const big = `${rel} is ${size} bytes, too large to read whole; read it with offset/limit`;
  if (part.line < start || (part.bytes.length === 0 && part.ended))
    return ok(`[${big}. It has ${part.line + 1} lines: offset ${start + 1} is past its end]\n`);
  let bytes = part.bytes;
  // stopped at the end of the last line asked for: its newline is not part of the lines
  if (!part.clipped && !part.ended && bytes[bytes.length - 1] === 10) bytes = bytes.subarray(0, -1);
  let body: string;
  let note = "";
  try {
    body = new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: part.clipped });
  } catch {
    body = bytes.toString("utf8");
    note = `[this part of ${rel} is not UTF-8 text: such bytes show as \uFFFD]\n`;
  }
  const last = part.clipped || part.ended ? part.line + 1 : part.line;
  note = `[lines ${start + 1}-${last}; ${big}]\n${note}`;
  if (part.clipped || body.length > ctx.outputLimit) {
    body = body.slice(0, ctx.outputLimit);
    note += `[truncated at ${ctx.outputLimit} characters; read further with offset/limit]\n`;
  }
  return ok(note + body);
}

export const writeFileTool = defineTool({
  name: "write_file",
  description:
    "Create or overwrite a file with the given full content. Creates missing parent folders. This is the only way to create a file.",
  toolClass: "mutate",
  schema: z.object({
    path: PathArg,
    content: z.string().describe("The complete new content of the file"),
  }),
  touches: ({ path: p }, workspace) => pathOf(workspace, p),
  async run({ path: p, content }, ctx) {
    const r = sandboxed(ctx.workspace, p);
    if ("failure" in r) return r.failure;
    const st = await statOrNull(r.abs);
    if (st?.isDirectory()) {
      return fail(
        "wrong_tool",
        `write_file: ${r.rel} is a directory, not a file. Choose a file path inside it, e.g. ${r.rel}/index.js.`,
      );
    }
    const what = st && notRegular(st);
    if (what) return notAFile("write_file", r.rel, what);
    await writeIn(ctx.workspace, r.rel, content, { makeParents: true });
    const verb = st ? "overwrote" : "created";
    return {
      ...ok(`${verb} ${r.rel} (${Buffer.byteLength(content)} bytes)`, [r.rel]),
      seen: { [r.rel]: contentHash(content) },
    };
  },
});

export const listDirTool = defineTool({
  name: "list_dir",
  description: "List the entries of a folder in the workspace (folders end with /).",
  toolClass: "explore",
  schema: z.object({ path: PathArg.default(".") }),
  async run({ path: p }, ctx) {
    const r = sandboxed(ctx.workspace, p);
    if ("failure" in r) return r.failure;
    const st = await statOrNull(r.abs);
    if (!st) return missingPath("list_dir", r.rel);
    if (!st.isDirectory())
      return fail("wrong_tool", `list_dir: ${r.rel} is a file; call read_file.`);
    const entries = await readdir(r.abs, { withFileTypes: true });
    const names = entries
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
      .sort((a, b) => a.localeCompare(b));
    return ok(names.length ? names.join("\n") : `(${r.rel} is empty)`);
  },
});

/** A trailing ".js"-like suffix marks a file name; a folder named so is the F2 failure. */
const FILE_EXTENSION = /\.[A-Za-z][A-Za-z0-9]{0,7}$/;

export const makeDirTool = defineTool({
  name: "make_dir",
  description: "Create an empty folder (and its parents). Not for files: use write_file for those.",
  toolClass: "mutate",
  schema: z.object({ path: PathArg }),
  touches: () => [],
  async run({ path: p }, ctx) {
    const base = path.posix.basename(p.replace(/\\/g, "/").replace(/\/+$/, ""));
    if (FILE_EXTENSION.test(base) && !base.startsWith(".")) {
      return fail(
        "wrong_tool",
        `make_dir: ${p} looks like a file name (it has an extension), and make_dir only creates folders. To create the file, call write_file with path "${p}" and its content.`,
      );
    }
    const r = sandboxed(ctx.workspace, p);
    if ("failure" in r) return r.failure;
    const st = await statOrNull(r.abs);
    if (st && !st.isDirectory()) return fail("failed", `make_dir: ${r.rel} exists and is a file.`);
    await mkdir(r.abs, { recursive: true });
    return ok(st ? `${r.rel} already exists` : `created folder ${r.rel}`);
  },
});
