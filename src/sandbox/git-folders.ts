/**
 * What the file tools' gate asks of the folders on a path: whether git would take one for a
 * repository's, by what it holds rather than its name (a `.git` is on the protected list by name).
 * Read from the file system at the write: a command may have made the folder since the run began.
 */
import path from "node:path";
import { lstatOf } from "../files/door.js";
import { sameName } from "./names.js";
import type { ProtectedPath } from "./protected.js";

/** Why a write in a folder git would take for a repository's is protected (`gitFoldersOn`). */
const GIT_FOLDER =
  "git takes this folder for a repository's (it holds HEAD and objects or a commondir): git runs its hooks and obeys its config";
const COMMON_FOLDER =
  "git can take this folder for the common folder a repository's commondir names (it holds objects and refs): git runs its hooks and obeys its config";

/**
 * The folders on a file tool's path that git would take for a repository's, with the write made: a
 * folder of `HEAD` with `objects` or a `commondir` (setup.c's is_git_directory; a `.git` is on the
 * list by its name, these are found by what they hold, whatever they are called), where any write
 * is one git obeys later; and a folder of `objects` and `refs`, the common folder a `commondir`
 * can name, whose config, hooks and info are. Read from the file system at the write: a command
 * may have made the folder since the run began. Workspace-relative, as protected paths.
 */
export function gitFoldersOn(workspace: string, rel: string): ProtectedPath[] {
  const parts = rel.split("/").filter((p) => p !== "" && p !== ".");
  const out: ProtectedPath[] = [];
  for (let i = 0; i < parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    const has = (name: string) =>
      sameName(parts[i]!, name) || lstatOf(path.join(workspace, dir, name)) !== undefined;
    if (has("HEAD") && (has("objects") || has("commondir")))
      out.push({ path: dir || ".", why: GIT_FOLDER });
    else if (has("objects") && has("refs") && COMMON_PARTS.some((n) => sameName(parts[i]!, n)))
      out.push({ path: [dir, parts[i]].filter(Boolean).join("/"), why: COMMON_FOLDER });
  }
  return out;
}

/** What git reads in a repository's common folder besides its objects and refs. */
const COMMON_PARTS = ["config", "config.worktree", "hooks", "info"];
