/**
 * A run's manifest as read back from the store, checked entry by entry. The store is shared (a
 * Postgres database several machines write), so its manifest is input like any other: an entry
 * whose path leads out of the target or that is not a file entry at all is left out and named,
 * never read, sent or trusted. Pure.
 */
import { z } from "zod";
import type { Enumeration } from "./enumerate.js";

/** What one listing of a run holds: its files and folders, where from, and with which model. */
export interface Manifest extends Omit<Enumeration, "index" | "hashed"> {
  /** This analysis (one listing of the target): what its queue jobs carry. */
  id: string;
  target: string;
  merkles: Record<string, string>;
  /** The model used, or null when the run has none. */
  model: string | null;
  noModelReason?: string;
  /** Entries of the stored manifest keel refused to use (set when it is read back, never stored). */
  refused?: string[];
}

/** A stored manifest that is missing or not one keel wrote. */
export class ManifestError extends Error {
  override name = "ManifestError";
}

/**
 * A path relative to the target, as enumeration writes them: `/`-separated names, none empty,
 * `.` or `..`, no NUL. Lexical only; reading the file checks the real path too (unit-text.ts).
 */
export function isInsidePath(p: string): boolean {
  if (p.length === 0 || p.length > 4096 || p.includes("\0")) return false;
  return !/(^|\/)\.{0,2}(\/|$)/.test(p);
}

const SHA1 = /^[0-9a-f]{40}$/;
const count = (n: unknown) => typeof n === "number" && Number.isInteger(n) && n >= 0;

/** Why a manifest entry is not a file entry keel wrote; undefined when it is one. (Hand-written: a manifest holds a million.) */
export function rowProblem(row: unknown): string | undefined {
  if (typeof row !== "object" || row === null) return "not an entry";
  const r = row as Record<string, unknown>;
  if (typeof r.path !== "string") return "no path";
  if (!isInsidePath(r.path)) return "not a path inside the analysed folder";
  if (typeof r.hash !== "string" || !SHA1.test(r.hash)) return "not a sha1";
  if (!count(r.bytes) || !count(r.lines)) return "bad sizes";
  if (typeof r.language !== "string" || r.language.length > 64) return "bad language";
  return undefined;
}
const Head = z.object({
  id: z.string().min(1),
  target: z.string().startsWith("/"),
  files: z.array(z.unknown()),
  folders: z.array(z.unknown()),
  merkles: z.record(z.string(), z.string()),
  skipped: z.record(z.string(), z.number()),
  model: z.string().nullable(),
  noModelReason: z.string().optional(),
});

/** How a refused entry is named: its path if it has a printable one, else its position. */
const nameOf = (row: unknown, i: number) => {
  const p = (row as { path?: unknown } | null)?.path;
  return typeof p === "string" ? JSON.stringify(p.slice(0, 200)) : `entry ${i}`;
};

/**
 * The manifest with the entries keel can use; throws when it is not a manifest at all, or (given
 * `target`, the folder the person asked for) when it is the manifest of another folder: its
 * paths are read from `target` only, never from a folder the store names.
 */
export function checkManifest(value: unknown, threadId: string, target?: string): Manifest {
  const head = Head.safeParse(value);
  if (!head.success)
    throw new ManifestError(
      `the manifest of analysis thread ${threadId} in the store is not one keel wrote (${head.error.issues[0]?.path.join(".")}: ${head.error.issues[0]?.message}); run the analysis again without --thread, or with a new one`,
    );
  if (target !== undefined && head.data.target !== target)
    throw new ManifestError(
      `the manifest of analysis thread ${threadId} in the store lists ${JSON.stringify(head.data.target.slice(0, 200))}, not ${target}: keel reads no file of it; run the analysis again with a new --thread`,
    );
  const refused: string[] = [];
  const files: Manifest["files"] = [];
  head.data.files.forEach((row, i) => {
    const problem = rowProblem(row);
    if (!problem) {
      const { path, bytes, lines, hash, language } = row as Manifest["files"][number];
      files.push({ path, bytes, lines, hash, language });
    } else refused.push(`${nameOf(row, i)}: ${problem}`);
  });
  const folders: string[] = [];
  head.data.folders.forEach((d, i) => {
    if (typeof d === "string" && (d === "." || isInsidePath(d))) folders.push(d);
    else refused.push(`folder ${nameOf({ path: d }, i)}: not a folder inside the analysed folder`);
  });
  return {
    ...head.data,
    files,
    folders,
    ...(refused.length ? { refused } : {}),
  };
}
