/**
 * Recording a changing step for undo: the files it will touch are stored in the shadow repository
 * before it runs and after (a file tool names its paths; a command or an MCP tool could touch
 * anything, so the whole workspace is snapshotted around it), and what changed is journaled.
 */
import { appendJournal } from "./journal.js";
import { ShadowRepo, type FileChange } from "./shadow.js";

export interface StepIdentity {
  workspace: string;
  thread: string;
  callId: string;
  messages: number;
  label: string;
  /** Workspace-relative paths the step may change; undefined: anything in the workspace. */
  paths: readonly string[] | undefined;
}

/**
 * Runs `step` between two snapshots and journals the files it changed. Undo is a safety net: when
 * the shadow repository cannot be used, the step still runs and `onProblem` says why.
 */
export async function recordStep<T>(
  id: StepIdentity,
  step: () => Promise<T>,
  onProblem: (why: string) => void,
): Promise<T> {
  if (id.paths?.length === 0) return step();
  let before: (() => Promise<FileChange[]>) | undefined;
  try {
    before = await snapshotBefore(id);
  } catch (err) {
    onProblem(`no undo snapshot for ${id.label}: ${(err as Error).message}`);
  }
  const result = await step();
  if (before)
    try {
      const files = await before();
      if (files.length) {
        await appendJournal(id.workspace, {
          kind: "step",
          thread: id.thread,
          callId: id.callId,
          messages: id.messages,
          label: id.label,
          at: new Date().toISOString(),
          files,
        });
      }
    } catch (err) {
      onProblem(`no undo record for ${id.label}: ${(err as Error).message}`);
    }
  return result;
}

/** Takes the "before" snapshot; the function it returns takes "after" and gives the changes. */
async function snapshotBefore(id: StepIdentity): Promise<() => Promise<FileChange[]>> {
  const repo = await ShadowRepo.open(id.workspace);
  if (!repo) throw new Error("git is not installed");
  const paths = id.paths;
  if (paths === undefined) {
    const tree = await repo.snapshot();
    return async () => repo.changes(tree, await repo.snapshot());
  }
  const blobs = await Promise.all(paths.map((p) => repo.store(p)));
  return async () => {
    const after = await Promise.all(paths.map((p) => repo.store(p)));
    return paths
      .map((path, i) => ({ path, before: blobs[i]!, after: after[i]! }))
      .filter((f) => f.before !== f.after);
  };
}
