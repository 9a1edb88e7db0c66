/**
 * Whether the run produced what its request asked to change, before act lets a final answer end
 * it `done` (agent/requested-effect.ts reads the request).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { requestedEffect, unwritten } from "../../requested-effect.js";
import type { CoderStateValue } from "../../state.js";

/**
 * What the request asked for and the run has not done, as a sentence for the failure's detail, or
 * undefined when nothing is missing. A named file counts as written when write_file or edit_file
 * wrote it this run, or when a command ran this run and the file is on disk (`cp`, a generator);
 * a request for "a file" without a name is met by any write.
 */
export function unmetEffect(
  state: Pick<CoderStateValue, "request" | "filesWritten" | "trail">,
  workspace: string,
): string | undefined {
  const effect = requestedEffect(state.request);
  if (!effect.writes) return undefined;
  const ranCommand = state.trail.some((t) => t.toolClass === "command" && t.ok);
  const missing = unwritten(effect.paths, state.filesWritten).filter(
    (p) => !(ranCommand && existsSync(path.resolve(workspace, p))),
  );
  if (missing.length > 0)
    return `the request asks for ${missing.join(", ")} to be written, and ${missing.length > 1 ? "they were" : "it was"} not`;
  if (effect.paths.length === 0 && state.filesWritten.length === 0 && !ranCommand)
    return "the request asks for the result to be written to a file, and no file was written";
  return undefined;
}
