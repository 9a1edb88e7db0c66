/** Option parsers several keel commands share (the run settings' flags: setting-flags.ts). */
import { existsSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { InvalidArgumentError } from "commander";
import { defaultCheckpoints, oldStoreNote } from "../persistence/checkpointer.js";
import { UsageError } from "../session/session.js";
import { realWorkspace } from "../tools/workspace-path.js";

/** A `--workspace` folder as its real path; a usage error when it is not an existing folder. */
export function workspaceFolder(dir: string): string {
  // path.resolve("") is this folder: an unset variable (-w "$DIR") must not mean "here".
  if (!dir.trim()) throw new UsageError("--workspace is empty: pass a folder, e.g. -w .");
  const abs = path.resolve(dir);
  const real = existsSync(abs) ? realWorkspace(abs) : undefined;
  if (!real || !statSync(real).isDirectory())
    throw new UsageError(
      `workspace ${abs} is not an existing folder; create it or pass --workspace <dir>`,
    );
  return real;
}

/**
 * The flags that go on with a thread from the folder keel runs in: the workspace where it is not
 * this folder, the store where one was given, and `settings`, the words of every setting the run's
 * flags gave (`flagWords`: the model server, and what the run may do — a run started with
 * `--approval plan` resumes with it); null for a store that keeps nothing (memory).
 */
export function threadFlags(
  flags: { checkpoints?: string },
  workspace: string,
  settings: readonly string[] = [],
): string[] | null {
  if (flags.checkpoints?.trim() === "memory") return null;
  return [
    ...(workspace === realpathSync(process.cwd()) ? [] : ["-w", workspace]),
    ...(flags.checkpoints ? ["--checkpoints", flags.checkpoints] : []),
    ...settings,
  ];
}

/** A `--thread` id: any text but empty or blank (a checkpointer cannot key a thread by it). */
export const threadId = (v: string) => {
  if (!v.trim()) throw new InvalidArgumentError("expected a thread id, not blank");
  return v;
};

export const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number ≥ 1");
  return n;
};

/** Commander's collector of a repeatable option. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** What `--help` says of the default store. */
export const DEFAULT_STORE =
  "the folder's own store in keel's state folder ($KEEL_STATE_DIR, $XDG_STATE_HOME/keel or ~/.local/state/keel), never in the folder";

/**
 * A command's checkpoint store: the one `--checkpoints` names, else the workspace's own in keel's
 * state folder — and then, once per workspace, what to do about a `.keel/keel.db` found in it
 * (`oldStoreNote`), said on stderr.
 */
export function checkpointsOf(given: string | undefined, workspace: string): string {
  if (given !== undefined) return given;
  const note = oldStoreNote(workspace);
  if (note) process.stderr.write(`keel: ${note}\n`);
  return defaultCheckpoints(workspace);
}
