/**
 * Canonical call signatures for loop detection (F5): tool name + arguments with sorted keys,
 * path-like values normalised (`.\src`, `./src`, `src/` are one path), long strings hashed.
 */
import { createHash } from "node:crypto";
import path from "node:path";

const PATH_KEYS = new Set([
  "path",
  "file",
  "file_path",
  "filepath",
  "filename",
  "dir",
  "directory",
  "folder",
]);
const LONG = 200;

/** Normalises a path the way a person reads it: separators, `./`, `.` segments, trailing `/`. */
export function normalisePath(p: string): string {
  const slashed = p.trim().replace(/\\/g, "/");
  if (slashed === "") return ".";
  const n = path.posix.normalize(slashed).replace(/\/+$/, "");
  return n === "" ? "/" : n.replace(/^\.\/(?=.)/, "");
}

function canonical(value: unknown, key?: string): unknown {
  if (typeof value === "string") {
    if (key && PATH_KEYS.has(key.toLowerCase())) return normalisePath(value);
    const v = value.trim().replace(/\s+/g, " ");
    return v.length > LONG ? `#${createHash("sha1").update(v).digest("hex").slice(0, 12)}` : v;
  }
  if (Array.isArray(value)) return value.map((v) => canonical(v));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k], k)]),
    );
  }
  return value;
}

/** A stable string for "the same call": equal for calls a person would call identical. */
export function callSignature(name: string, args: unknown): string {
  return `${name}(${JSON.stringify(canonical(args ?? {}))})`;
}

/** A call split for the wobble detector: what it targets (its path) and everything else. */
export function callParts(
  name: string,
  args: unknown,
): { target: string | undefined; rest: string } {
  const rec =
    args && typeof args === "object" && !Array.isArray(args)
      ? (args as Record<string, unknown>)
      : {};
  const pathKey = Object.keys(rec).find((k) => PATH_KEYS.has(k.toLowerCase()));
  const target =
    pathKey && typeof rec[pathKey] === "string" ? normalisePath(rec[pathKey]) : undefined;
  const rest = Object.fromEntries(Object.entries(rec).filter(([k]) => k !== pathKey));
  return { target, rest: `${name}(${JSON.stringify(canonical(rest))})` };
}

/** A short hash of a tool result, so "same call, same result" can be told from a poll. */
export function resultHash(text: string): string {
  return createHash("sha1").update(text).digest("hex").slice(0, 12);
}
