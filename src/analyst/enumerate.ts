/**
 * Deterministic enumeration of a codebase (no model call spent on listing): the files under a
 * folder, honouring .gitignore files, skipping binaries, vendored and generated code and anything
 * over the size cap; then the folders above them, deepest first, for bottom-up synthesis.
 */
import { createHash } from "node:crypto";
import { lstat, readdir } from "node:fs/promises";
import type { Stats } from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { FileRefused, readIn } from "../files/door.js";
import { KEEL_DIR } from "../sandbox/protected.js";
import { languageOf } from "../tools/code-structure.js";

/**
 * The mark every report keel writes carries near its start (a Markdown comment, the JSON's
 * `generator`): enumeration skips marked files, so the analyst never reads its own output, wherever
 * `--out` put it.
 */
export const REPORT_MARK = "keel-analyze-report";

export interface FileUnit {
  /** Path relative to the analysed folder, with `/`. */
  path: string;
  bytes: number;
  lines: number;
  /** sha1 of the content: the key of its finding. */
  hash: string;
  language: string;
}

export interface Enumeration {
  files: FileUnit[];
  /** What each listed or content-skipped file was, by its size and times: the next run's `previous`. */
  index: StatIndex;
  /** Files read and hashed this time (the others were known by their size and times). */
  hashed: number;
  /** Every folder holding an analysed file, deepest first ("." last). */
  folders: string[];
  skipped: Record<
    "ignored" | "vendored" | "generated" | "binary" | "too_large" | "not_source",
    number
  >;
}

/** Folders that hold other people's code or build output. */
/** Lines as `wc -l` and editors count them: a last line without its newline counts too. */
export const lineCount = (text: string): number =>
  text === "" ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

const VENDORED = new Set([
  "node_modules",
  "vendor",
  "third_party",
  "bower_components",
  ".venv",
  "venv",
  "env",
  "__pycache__",
  ".git",
  ".hg",
  ".svn",
  ".idea",
  ".vscode",
  ".next",
  ".nuxt",
  ".cache",
  ".tox",
  ".mypy_cache",
  ".pytest_cache",
  "target",
  "dist",
  "build",
  "out",
  "coverage",
  ".gradle",
  ".terraform",
]);
const GENERATED =
  /(\.min\.(js|css)|\.map|\.lock|-lock\.json|\.pb\.go|_pb2\.py|\.generated\.\w+|\.snap)$|^(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock|go\.sum|composer\.lock)$/;
const BINARY_EXT =
  /\.(png|jpe?g|gif|webp|ico|bmp|tiff|pdf|zip|gz|tgz|bz2|xz|7z|rar|jar|war|class|so|dylib|dll|exe|bin|o|a|wasm|woff2?|ttf|otf|eot|mp[34]|mov|avi|wav|flac|ogg|db|sqlite3?|parquet|pyc|pkl|npy|onnx|gguf|safetensors)$/i;
const TEXT_NAMES = /^(README|LICENSE|Makefile|Dockerfile|CHANGELOG|CONTRIBUTING)(\.\w+)?$/i;

export interface EnumerateOptions {
  /** Files larger than this are skipped (default 1 MiB). */
  maxBytes?: number;
  /** The index of an earlier run: a file whose size and times are unchanged is not read again. */
  previous?: StatIndex;
  /** The clock, for the index's stamp (tests). */
  now?: () => number;
}

/**
 * What a file was when last read, as git's index keeps it: a file whose size, modification and
 * change times and inode are the same is the same file, and its hash is not computed again.
 */
export interface StatEntry {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  /** A unit's hash and lines; or why its content kept it out. */
  hash?: string;
  lines?: number;
  skip?: "binary" | "generated";
}

export interface StatIndex {
  /** When the listing that wrote it began (ms). */
  stamp: number;
  files: Record<string, StatEntry>;
}

/**
 * A file modified this close to (or after) the start of the listing that saw it may have changed
 * again within the same timestamp: git calls it "racily clean" and reads it again; so does keel.
 */
export const RACY_MS = 2000;

/** The entry `previous` holds for a file that still has this size and these times, if any. */
export function unchanged(
  previous: StatIndex | undefined,
  rel: string,
  st: Pick<Stats, "size" | "mtimeMs" | "ctimeMs" | "ino">,
): StatEntry | undefined {
  const e = previous?.files[rel];
  if (!e || !previous) return undefined;
  if (e.size !== st.size || e.mtimeMs !== st.mtimeMs || e.ctimeMs !== st.ctimeMs) return undefined;
  if (e.ino !== st.ino || Math.max(e.mtimeMs, e.ctimeMs) >= previous.stamp - RACY_MS)
    return undefined;
  return e;
}

/**
 * A file of the analysed folder through keel's file door (`files/door.ts`): no link followed, a
 * FIFO or device refused at once, at most `maxBytes`; the refusal, or undefined when it is not there.
 */
async function readUnitBytes(root: string, rel: string, maxBytes: number) {
  return readIn(root, rel, { maxBytes }).catch((e: unknown) => {
    if (e instanceof FileRefused) return e;
    throw e;
  });
}

/** Lists what to analyse under `root`. Never follows a symlink, never opens what is not a regular file. */
export async function enumerateUnits(
  root: string,
  opts: EnumerateOptions = {},
): Promise<Enumeration> {
  const listing: Listing = {
    root,
    previous: opts.previous,
    maxBytes: opts.maxBytes ?? 1024 * 1024,
    skipped: {
      ignored: 0,
      vendored: 0,
      generated: 0,
      binary: 0,
      too_large: 0,
      not_source: 0,
    },
    files: [],
    index: { stamp: (opts.now ?? Date.now)(), files: {} },
    hashed: 0,
    // File system calls in flight at once: a walk waits on thousands of them, one at a time is slow
    limit: limiter(64),
  };
  await walkFolder(listing, "", []);
  const { files, index, hashed, skipped } = listing;
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, index, hashed, folders: foldersAbove(files), skipped };
}

/** One listing under way: where, what it found and skipped so far, and its file system calls. */
interface Listing {
  root: string;
  previous: StatIndex | undefined;
  maxBytes: number;
  skipped: Enumeration["skipped"];
  files: FileUnit[];
  index: StatIndex;
  /** Files read and hashed (not unchanged since `previous`). */
  hashed: number;
  limit: ReturnType<typeof limiter>;
}

/** A file that passed the name checks: its size, then what it is (read only when it changed). */
async function visitFile(listing: Listing, rel: string, name: string): Promise<void> {
  const { root, maxBytes, skipped } = listing;
  // its own stats: a link swapped in since the listing is not followed (nor read below)
  const st = await lstat(path.join(root, rel)).catch(() => undefined);
  if (!st?.isFile()) return;
  if (st.size > maxBytes) return void skipped.too_large++;
  if (
    !languageOf(rel) &&
    !TEXT_NAMES.test(name) &&
    !/\.(md|txt|rst|json|ya?ml|toml|ini|cfg|sql|html?|xml|sh|env\.example)$/i.test(name)
  )
    return void skipped.not_source++;
  let entry = unchanged(listing.previous, rel, st);
  if (!entry) {
    const buf = await readUnitBytes(root, rel, maxBytes);
    if (buf instanceof FileRefused && buf.reason === "too_large") return void skipped.too_large++;
    if (!Buffer.isBuffer(buf)) return; // swapped for a FIFO, a link or nothing since it was listed
    entry = entryOf(buf, st);
    listing.hashed++;
  }
  listing.index.files[rel] = entry;
  if (entry.skip) return void skipped[entry.skip]++;
  listing.files.push({
    path: rel,
    bytes: entry.size,
    lines: entry.lines!,
    hash: entry.hash!,
    language: languageOf(rel) ?? (path.extname(rel).slice(1) || "text"),
  });
}

/** Lists a folder by the .gitignore rules above it and its own: files visited, folders walked. */
async function walkFolder(
  listing: Listing,
  dir: string,
  rules: Array<{ base: string; ig: Ignore }>,
): Promise<void> {
  const { root, limit, skipped } = listing;
  const abs = path.join(root, dir);
  const entries = await limit(() => readdir(abs, { withFileTypes: true }));
  // a .gitignore that is a link or a FIFO is no rules (a FIFO would wait for a writer for ever)
  const ignoreFile = entries.some((e) => e.name === ".gitignore" && e.isFile())
    ? await limit(() =>
        readUnitBytes(root, dir === "" ? ".gitignore" : `${dir}/.gitignore`, 1 << 20),
      )
    : undefined;
  const gitignore = Buffer.isBuffer(ignoreFile) ? ignoreFile.toString("utf8") : undefined;
  const scoped = gitignore ? [...rules, { base: dir, ig: ignore().add(gitignore) }] : rules;
  const ignored = (rel: string, isDir: boolean) =>
    scoped.some(({ base, ig }) => {
      const sub = base === "" ? rel : path.posix.relative(base, rel);
      return !sub.startsWith("..") && ig.ignores(isDir ? `${sub}/` : sub);
    });
  const next: Array<Promise<void>> = [];
  for (const e of entries) {
    const rel = dir === "" ? e.name : `${dir}/${e.name}`;
    if (e.isSymbolicLink()) continue;
    if (e.isDirectory()) {
      // keel's own folder (its reports, checkpoints) is no part of the project, not even skipped
      if (dir === "" && e.name === KEEL_DIR) continue;
      if (VENDORED.has(e.name)) skipped.vendored++;
      else if (ignored(rel, true)) skipped.ignored++;
      else next.push(walkFolder(listing, rel, scoped));
      continue;
    }
    if (!e.isFile() || e.name === ".gitignore") continue;
    if (ignored(rel, false)) skipped.ignored++;
    else if (GENERATED.test(e.name)) skipped.generated++;
    else if (BINARY_EXT.test(e.name)) skipped.binary++;
    else next.push(limit(() => visitFile(listing, rel, e.name)));
  }
  await Promise.all(next);
}

/** Every folder holding a listed file, and "." — deepest first, for bottom-up synthesis. */
function foldersAbove(files: readonly FileUnit[]): string[] {
  const folders = new Set<string>(["."]);
  for (const f of files) {
    let d = path.posix.dirname(f.path);
    while (d !== ".") {
      folders.add(d);
      d = path.posix.dirname(d);
    }
  }
  const depth = (d: string) => (d === "." ? 0 : d.split("/").length);
  return [...folders].sort((a, b) => depth(b) - depth(a) || a.localeCompare(b));
}

/** A file read once: its hash and lines, or why its content keeps it out of the analysis. */
function entryOf(buf: Buffer, st: Stats): StatEntry {
  const stats = { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino };
  if (buf.subarray(0, 8192).includes(0)) return { ...stats, skip: "binary" };
  // keel's own reports (any --out, any earlier run) are output, not source.
  if (buf.subarray(0, 256).includes(REPORT_MARK)) return { ...stats, skip: "generated" };
  return {
    ...stats,
    // the size read, not the size seen: a file written between the two is read again next time
    size: buf.length,
    hash: createHash("sha1").update(buf).digest("hex"),
    lines: lineCount(buf.toString("utf8")),
  };
}

/** Runs at most `n` of the calls given to it at once. */
function limiter(n: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(call: () => Promise<T>): Promise<T> => {
    if (running < n) running++;
    else await new Promise<void>((r) => waiting.push(r)); // the slot is handed over, not freed
    try {
      return await call();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
