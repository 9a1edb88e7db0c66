/**
 * Deterministic enumeration of a codebase (no model call spent on listing): the files under a
 * folder, honouring .gitignore files, skipping binaries, vendored and generated code and anything
 * over the size cap; then the folders above them, deepest first, for bottom-up synthesis.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
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
}

/**
 * A file of the analysed folder through keel's file door (`files/door.ts`): no link followed, a
 * FIFO or device refused at once, at most `maxBytes`; undefined when it is not such a file (or not
 * there).
 */
async function readUnitBytes(root: string, rel: string, maxBytes: number) {
  return readIn(root, rel, { maxBytes }).catch((e: unknown) => {
    if (e instanceof FileRefused) return e;
    throw e;
  });
}

/** A listed unit's text, read again through the door; an error naming it when it is gone or changed kind. */
export async function readUnit(root: string, rel: string): Promise<string> {
  const bytes = await readUnitBytes(root, rel, Infinity);
  if (bytes instanceof FileRefused) throw bytes;
  if (bytes === undefined) throw new Error(`${path.join(root, rel)} is gone since it was listed`);
  return bytes.toString("utf8");
}

/** Lists what to analyse under `root`. Never follows a symlink, never opens what is not a regular file. */
export async function enumerateUnits(
  root: string,
  opts: EnumerateOptions = {},
): Promise<Enumeration> {
  const maxBytes = opts.maxBytes ?? 1024 * 1024;
  const skipped: Enumeration["skipped"] = {
    ignored: 0,
    vendored: 0,
    generated: 0,
    binary: 0,
    too_large: 0,
    not_source: 0,
  };
  const files: FileUnit[] = [];

  const walk = async (dir: string, rules: Array<{ base: string; ig: Ignore }>) => {
    const abs = path.join(root, dir);
    // a .gitignore that is a link or a FIFO is no rules (a FIFO would wait for a writer for ever)
    const ignoreFile = await readUnitBytes(
      root,
      dir === "" ? ".gitignore" : `${dir}/.gitignore`,
      1 << 20,
    );
    const gitignore = Buffer.isBuffer(ignoreFile) ? ignoreFile.toString("utf8") : undefined;
    const scoped = gitignore ? [...rules, { base: dir, ig: ignore().add(gitignore) }] : rules;
    const ignored = (rel: string, isDir: boolean) =>
      scoped.some(({ base, ig }) => {
        const sub = base === "" ? rel : path.posix.relative(base, rel);
        return !sub.startsWith("..") && ig.ignores(isDir ? `${sub}/` : sub);
      });
    const entries = (await readdir(abs, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const e of entries) {
      const rel = dir === "" ? e.name : `${dir}/${e.name}`;
      if (e.isSymbolicLink()) continue;
      if (e.isDirectory()) {
        // keel's own folder (its reports, checkpoints) is no part of the project, not even skipped
        if (dir === "" && e.name === KEEL_DIR) continue;
        if (VENDORED.has(e.name)) skipped.vendored++;
        else if (ignored(rel, true)) skipped.ignored++;
        else await walk(rel, scoped);
        continue;
      }
      if (!e.isFile()) continue;
      if (e.name === ".gitignore") continue;
      if (ignored(rel, false)) {
        skipped.ignored++;
        continue;
      }
      if (GENERATED.test(e.name)) {
        skipped.generated++;
        continue;
      }
      if (BINARY_EXT.test(e.name)) {
        skipped.binary++;
        continue;
      }
      const buf = await readUnitBytes(root, rel, maxBytes);
      if (buf instanceof FileRefused && buf.reason === "too_large") {
        skipped.too_large++;
        continue;
      }
      if (!Buffer.isBuffer(buf)) continue; // swapped for a FIFO, a link or nothing since it was listed
      const size = buf.length;
      if (buf.subarray(0, 8192).includes(0)) {
        skipped.binary++;
        continue;
      }
      // keel's own reports (any --out, any earlier run) are output, not source.
      if (buf.subarray(0, 256).includes(REPORT_MARK)) {
        skipped.generated++;
        continue;
      }
      if (
        !languageOf(rel) &&
        !TEXT_NAMES.test(e.name) &&
        !/\.(md|txt|rst|json|ya?ml|toml|ini|cfg|sql|html?|xml|sh|env\.example)$/i.test(e.name)
      ) {
        skipped.not_source++;
        continue;
      }
      const text = buf.toString("utf8");
      files.push({
        path: rel,
        bytes: size,
        lines: lineCount(text),
        hash: createHash("sha1").update(buf).digest("hex"),
        language: languageOf(rel) ?? (path.extname(rel).slice(1) || "text"),
      });
    }
  };
  await walk("", []);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

  const folders = new Set<string>(["."]);
  for (const f of files) {
    let d = path.posix.dirname(f.path);
    while (d !== ".") {
      folders.add(d);
      d = path.posix.dirname(d);
    }
  }
  const depth = (d: string) => (d === "." ? 0 : d.split("/").length);
  return {
    files,
    folders: [...folders].sort((a, b) => depth(b) - depth(a) || a.localeCompare(b)),
    skipped,
  };
}
