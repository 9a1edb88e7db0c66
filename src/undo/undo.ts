/**
 * Undo and diff of a thread's file changes, from the journal and the shadow repository: the plan
 * for the files on disk now, applying it, and the diff of what the agent changed.
 */
import { readdir, rm, rmdir } from "node:fs/promises";
import path from "node:path";
import { createTwoFilesPatch } from "diff";
import { printableName } from "../printable.js";
import { appendJournal, lastThread, liveSteps, readJournal, type StepRecord } from "./journal.js";
import { planUndo, touched, type UndoAction } from "./plan.js";
import { blobId, ShadowRepo } from "./shadow.js";
import { isKeelOwn, protectedEntry } from "../sandbox/protected.js";
import { FileRefused, readIn, writeIn } from "../files/door.js";
import { resolveInWorkspace } from "../tools/workspace-path.js";

export class UndoError extends Error {
  override name = "UndoError";
}

/** Nothing is left to undo or show: not a usage error, only nothing to do. */
export class NothingToUndoError extends UndoError {
  override name = "NothingToUndoError";
  /** The thread whose changes are all undone already (an undo asked again is done), if that is the reason. */
  readonly undoneThread?: string;
  constructor(message: string, undoneThread?: string) {
    super(message);
    if (undoneThread !== undefined) this.undoneThread = undoneThread;
  }
}

export interface UndoPlan {
  thread: string;
  /** The steps undone, oldest first. */
  steps: StepRecord[];
  actions: UndoAction[];
}

/**
 * What undoing `thread` (default: the thread whose step ran last) from step `from` (default: its
 * first step not undone yet) would do to the files on disk now.
 */
export async function planThreadUndo(
  workspace: string,
  opts: { thread?: string; from?: number },
): Promise<UndoPlan> {
  const { thread, live } = await threadSteps(workspace, opts.thread);
  const from = opts.from ?? live[0]!.step;
  if (!live.some((s) => s.step === from))
    throw new UndoError(
      `thread ${thread} has no step ${from} to undo; its steps: ${live.map((s) => s.step).join(", ")} (see keel diff)`,
    );
  const steps = live.filter((s) => s.step >= from);
  const current = new Map<string, string | null>();
  for (const p of touched(steps).keys()) current.set(p, await diskBlob(workspace, p));
  return { thread, steps, actions: planUndo(steps, current) };
}

/**
 * Where an undo may act on a journaled path: its real path (links resolved, for a missing file of
 * its deepest existing ancestor) inside the workspace and outside keel's own folder, whatever the
 * journal says; and not a protected path reached through a link that was not there when keel
 * journaled it (the journal holds real paths: `docs/pre-commit` restored through a link
 * `docs → .git/hooks` would plant a hook). A path that is not is an UndoError.
 */
export function undoTarget(workspace: string, rel: string): string {
  const r = resolveInWorkspace(workspace, rel);
  if (!r.ok || path.isAbsolute(rel) || isKeelOwn(r.rel))
    throw new UndoError(
      `the undo journal names ${JSON.stringify(rel)}, which is not a file of the workspace keel may change; keel undo touches nothing outside ${workspace}`,
    );
  const named = path.posix.normalize(rel.replace(/\\/g, "/"));
  const guarded = protectedEntry(r.rel);
  if (r.rel !== named && guarded)
    throw new UndoError(
      `the undo journal names ${JSON.stringify(rel)}, and a link now leads it to ${r.rel} (${guarded.why}); keel undo does not write there through a link. Remove the link, then undo again`,
    );
  return r.abs;
}

const BLOB = /^[0-9a-f]{40}$/;

/** Applies a plan: files restored or removed (and folders left empty removed), the undo journaled. */
export async function applyUndo(workspace: string, plan: UndoPlan): Promise<void> {
  const repo = await ShadowRepo.open(workspace);
  if (!repo) throw new UndoError("git is not installed: the shadow repository cannot be read");
  for (const a of plan.actions) undoTarget(workspace, a.path);
  for (const a of plan.actions) {
    const abs = undoTarget(workspace, a.path);
    if (a.action === "restore" && !BLOB.test(a.blob))
      throw new UndoError(`the undo journal names ${JSON.stringify(a.blob)}, which is not a blob`);
    if (a.action === "restore") {
      const rel = path.relative(workspace, abs);
      await writeIn(workspace, rel, await repo.read(a.blob), { makeParents: true });
    } else if (a.action === "remove") {
      await rm(abs, { force: true });
      await removeEmptyParents(workspace, path.dirname(abs));
    }
  }
  await appendJournal(workspace, {
    kind: "undo",
    thread: plan.thread,
    steps: plan.steps.map((s) => s.step),
    at: new Date().toISOString(),
  });
}

/**
 * The unified diff of what the agent changed in a thread (steps not undone), file by file; file
 * names with their control characters as codes (`printableName`: a newline in a name would forge a
 * header, an escape sequence erase a line), content as stored (the CLI shows it `printable`).
 */
export async function threadDiff(
  workspace: string,
  threadId?: string,
): Promise<{ thread: string; steps: StepRecord[]; patch: string }> {
  const { thread, live } = await threadSteps(workspace, threadId);
  const repo = await ShadowRepo.open(workspace);
  if (!repo) throw new UndoError("git is not installed: the shadow repository cannot be read");
  const text = async (blob: string | null) => (blob ? await repo.read(blob) : Buffer.alloc(0));
  const patches: string[] = [];
  for (const [file, f] of touched(live)) {
    if (f.before === f.after) continue;
    const [a, b] = [await text(f.before), await text(f.after)];
    const name = printableName(file);
    if (a.includes(0) || b.includes(0)) {
      patches.push(`Binary file ${name} differs\n`);
      continue;
    }
    patches.push(
      createTwoFilesPatch(
        f.before ? `a/${name}` : "/dev/null",
        f.after ? `b/${name}` : "/dev/null",
        a.toString("utf8"),
        b.toString("utf8"),
        undefined,
        undefined,
        { context: 3 },
      ).replace(/^=+\n/, ""),
    );
  }
  return { thread, steps: live, patch: patches.join("") };
}

async function threadSteps(workspace: string, threadId?: string) {
  const lines = await readJournal(workspace);
  const thread = threadId ?? lastThread(lines);
  if (!thread)
    throw new NothingToUndoError(
      `keel has changed no files in ${workspace} (no undo journal in keel's state); nothing to undo or show`,
    );
  const live = liveSteps(lines, thread);
  if (live.length === 0 && !lines.some((l) => l.thread === thread)) {
    // A thread keel never changed a file for (or a mistyped id): name the ones it did.
    const known = [...new Set(lines.map((l) => l.thread).reverse())].slice(0, 5);
    throw new NothingToUndoError(
      known.length
        ? `thread ${thread} changed no files in ${workspace}; threads that did, newest first: ${known.join(", ")}`
        : `thread ${thread} changed no files in ${workspace}, and no thread did (no undo journal in keel's state)`,
    );
  }
  if (live.length === 0)
    throw new NothingToUndoError(
      `thread ${thread} has no file changes left in ${workspace}: all of them were undone`,
      thread,
    );
  return { thread, live };
}

/** A file's blob on disk now (null: none), read through the door; a FIFO or link there is not one. */
async function diskBlob(workspace: string, rel: string): Promise<string | null> {
  const abs = undoTarget(workspace, rel);
  const bytes = await readIn(workspace, path.relative(workspace, abs), {
    maxBytes: Infinity,
  }).catch((e: unknown) => {
    if (e instanceof FileRefused && e.reason !== "too_large") return undefined;
    throw e;
  });
  return bytes === undefined ? null : blobId(bytes);
}

async function removeEmptyParents(workspace: string, dir: string): Promise<void> {
  while (dir.startsWith(workspace + path.sep)) {
    if ((await readdir(dir).catch(() => ["?"])).length > 0) return;
    await rmdir(dir).catch(() => undefined);
    dir = path.dirname(dir);
  }
}
