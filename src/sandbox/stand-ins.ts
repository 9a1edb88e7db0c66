/**
 * The sandbox's stand-ins in what the model is shown: while a command runs, an empty read-only
 * folder holds each missing protected path (`sandboxDenyPaths`), and a listing would show them all
 * as if they were the workspace's. Pure.
 */
import path from "node:path";
import { PLACEHOLDER } from "./protected.js";

/** The workspace-relative names the sandbox holds with an empty folder, from its deny list. */
export const standIns = (workspace: string, denied: readonly string[]): string[] =>
  denied
    .filter((d) => path.basename(d) === PLACEHOLDER)
    .map((d) => path.relative(workspace, path.dirname(d)).split(path.sep).join("/"));

/** A folder's line in `ls -l`: mode, links, owner, group, size, date, then the name. */
const LONG_LISTING = /^d[rwxsStT-]{9}[.+@]?\s+\d+\s.*\s(\S+?)\/?$/;
/** A name in `find`, `du` or `tree` output: after `./`, the workspace, a size or a top-level branch. */
const PATH_LISTING = /^(?:\d+(?:\.\d+)?[KMGk]?\s+)?(?:[├└]── |[|`]-- )?(?:\.\/)?(.+?)\/?$/;
/** `ls -a` of the workspace lists this many stand-ins or more. */
const BARE_LISTING = 10;
/** `ls -R`'s heading of a folder's part: `./name:`. */
const RECURSIVE_HEADING = /^\.\/(.+):$/;

/**
 * A command's output as the workspace really is: lines that only list one of the empty folders
 * standing in for missing protected paths during the command (`sandboxDenyPaths`) are left out —
 * `find`, `du` and top-level `tree` lines; `ls -l` lines and `ls -R` headings; bare names (`ls`,
 * `ls -a`) only in a block of one-word lines that is a listing of the workspace's top level (each
 * line `.`, `..`, a stand-in or an entry there, `top`) and shows every stand-in without a leading
 * dot (what `ls` shows) or ten or more of them (`ls -a`): a `.gitignore` that names `.vscode` keeps
 * its line. `deeper`: protected paths that really exist below the top level — an `ls` line naming
 * one of their names may be listing that folder, and stays.
 */
export function withoutStandIns(
  output: string,
  names: readonly string[],
  workspace: string,
  deeper: readonly string[] = [],
  top: readonly string[] = [],
): string {
  if (names.length === 0) return output;
  const held = new Set(names);
  const undotted = names.filter((n) => !n.startsWith("."));
  const real = new Set(deeper.map((rel) => rel.split("/").at(-1)!));
  const present = new Set([".", "..", ...top]);
  const prefix = `${workspace.split(path.sep).join("/")}/`;
  const lines = output.split("\n");
  const drop: Array<"listed" | "heading" | "bare" | undefined> = lines.map((line) => {
    const long = LONG_LISTING.exec(line)?.[1];
    if (long !== undefined) return held.has(long) && !real.has(long) ? "listed" : undefined;
    const heading = RECURSIVE_HEADING.exec(line)?.[1];
    if (heading !== undefined) return held.has(heading) ? "heading" : undefined;
    const text = line.startsWith(prefix) ? line.slice(prefix.length) : line;
    const name = PATH_LISTING.exec(text)?.[1];
    if (name === undefined || !held.has(name)) return undefined;
    if (line !== name && line !== `${name}/`) return "listed";
    return real.has(name) ? undefined : "bare";
  });
  // a block of one-word lines: drop its bare stand-ins when it is a listing of the top level
  for (let i = 0; i < lines.length;) {
    let j = i;
    while (j < lines.length && /^\S+$/.test(lines[j]!)) j++;
    const block = lines.slice(i, j).map((l) => l.replace(/\/$/, ""));
    const bare = new Set(block.filter((_, k) => drop[i + k] === "bare"));
    const entry = (l: string) => present.has(l) && !held.has(l) && l !== "." && l !== "..";
    const listing =
      block.every((l) => bare.has(l) || present.has(l) || l === ".:") &&
      (bare.size >= BARE_LISTING ||
        (undotted.length > 0 && undotted.every((n) => bare.has(n)) && block.some(entry)));
    if (!listing) for (let k = i; k < j; k++) if (drop[k] === "bare") drop[k] = undefined;
    i = j === i ? i + 1 : j;
  }
  // an empty folder's part in `ls -R`: its heading, what `-a` lists in it, and the blank line after
  drop.forEach((d, i) => {
    if (d !== "heading") return;
    let k = i + 1;
    while (lines[k] === "." || lines[k] === "..") drop[k++] = "listed";
    if (lines[k] === "") drop[k] = "listed";
  });
  if (!drop.some(Boolean)) return output;
  return lines.filter((_, i) => !drop[i]).join("\n");
}
