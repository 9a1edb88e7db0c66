import { realpathSync } from "node:fs";
import path from "node:path";
import { hiddenInName, printableName } from "../printable.js";
import { realTarget } from "../sandbox/real-path.js";

export type Resolved =
  | { ok: true; abs: string; rel: string }
  | { ok: false; kind: "outside_workspace" | "invalid_arguments"; message: string };

const MAX_PATH = 4096;

/**
 * Resolves a path a model gave against the workspace root, refusing anything that would read or
 * write outside it: `..`, absolute paths elsewhere, `~`, drive letters, NUL bytes, symlinks whose
 * target lies outside, and dangling links. `abs` and `rel` are of the REAL path (links resolved, for a
 * path that does not exist yet those of its deepest existing ancestor), so a tool acts on what it
 * checked and the rules see what is really touched. Backslashes are taken as separators (models trained on Windows
 * transcripts write `.\src`). Never throws.
 *
 * @param workspace the real (symlink-free) absolute path of the workspace root
 */
export function resolveInWorkspace(workspace: string, userPath: string): Resolved {
  if (typeof userPath !== "string" || userPath.length === 0) {
    return { ok: false, kind: "invalid_arguments", message: "path is empty" };
  }
  if (userPath.includes("\0")) {
    return { ok: false, kind: "invalid_arguments", message: "path contains a NUL byte" };
  }
  if (userPath.length > MAX_PATH) {
    return {
      ok: false,
      kind: "invalid_arguments",
      message: `path is ${userPath.length} characters long; the limit is ${MAX_PATH}`,
    };
  }
  const p = userPath.replace(/\\/g, "/").trim();
  const outside = (why: string): Resolved => ({
    ok: false,
    kind: "outside_workspace",
    message: `${JSON.stringify(userPath)} is outside the workspace (${why}). Use a path relative to the workspace root, e.g. "src/app.ts".`,
  });
  if (p.startsWith("~")) return outside("a home directory is not the workspace");
  if (/^[a-zA-Z]:/.test(p) || p.startsWith("//")) return outside("a drive or network path");

  const abs = path.resolve(workspace, p);
  if (!isInside(workspace, abs)) return outside("it leaves the workspace root");

  const real = realTarget(abs);
  if (real === undefined) return outside("a symbolic link on the way leads nowhere");
  if (!isInside(workspace, real)) return outside("a symbolic link leads out of it");
  const rel = path.relative(workspace, real) || ".";
  return { ok: true, abs: real, rel: rel.split(path.sep).join("/") };
}

/**
 * Why a path the model gave is refused for holding a control or bidirectional character (an escape
 * sequence or a right-to-left override in a name can hide or reorder what a person reviews), or
 * none. A newline or tab around the path is not counted: it is trimmed, as models often add one.
 */
export function hiddenNameRefusal(userPath: string): string | undefined {
  const name = userPath.trim();
  const hidden = hiddenInName(name);
  return hidden
    ? `path "${printableName(name)}" has the control character ${hidden.code} at position ${hidden.at + 1}: file names with control or bidirectional characters are refused (they can hide or reorder what a person reviews). Use a name of visible characters only.`
    : undefined;
}

/** Whether `abs` really lies in the workspace (through every link); for the walks' entries. */
export function reallyInside(workspace: string, abs: string): boolean {
  const real = realTarget(abs);
  return real !== undefined && isInside(workspace, real);
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** The real path of a workspace root; throws with a clear message if it does not exist. */
export function realWorkspace(dir: string): string {
  try {
    return realpathSync(path.resolve(dir));
  } catch {
    throw new Error(
      `workspace ${dir} does not exist; create it or pass --workspace <existing dir>`,
    );
  }
}
