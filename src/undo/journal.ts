/**
 * The undo journal: one line per step that changed files (which files, their blobs before and
 * after, the conversation point) and one per undo, appended to `steps.jsonl` next to the shadow
 * repository, in the workspace's folder of keel's state (`files/state.ts`): outside the workspace,
 * where neither a command nor a repository's own files can reach it.
 */
import { existsSync } from "node:fs";
import { appendFile, readFile } from "node:fs/promises";
import path from "node:path";
import { ensureStateFolder, openWorkspaceState, workspaceState } from "../files/state.js";
import type { FileChange } from "./shadow.js";

export interface StepRecord {
  kind: "step";
  thread: string;
  /** Per thread, from 1, in the order the steps ran (numbered when the journal is read). */
  step: number;
  /** The tool call, and how many messages the thread had held when it ran, moved ones too (finds its checkpoint). */
  callId: string;
  messages: number;
  /** "edit_file src/a.js", "run_command npm test". */
  label: string;
  at: string;
  files: FileChange[];
}

export interface UndoRecord {
  kind: "undo";
  thread: string;
  steps: number[];
  at: string;
}

/**
 * A `keel run` of a thread: the flags its settings were given on the command line, so that what
 * keel later says to go on with the thread (after `keel undo`) is the same run (never a secret).
 */
export interface RunRecord {
  kind: "run";
  thread: string;
  flags: string[];
  at: string;
}

export type JournalLine = StepRecord | UndoRecord | RunRecord;

/** The journal's lines, each thread's steps numbered from 1 in the order they were written. */
export async function readJournal(workspace: string): Promise<JournalLine[]> {
  const file = workspaceState(workspace).journal;
  if (!existsSync(file)) return [];
  const counts = new Map<string, number>();
  return (await readFile(file, "utf8"))
    .split("\n")
    .filter(Boolean)
    .flatMap((l) => {
      let line: JournalLine;
      try {
        line = JSON.parse(l) as JournalLine;
      } catch {
        return []; // a line cut by a crash
      }
      if (line.kind === "step") {
        const step = (counts.get(line.thread) ?? 0) + 1;
        counts.set(line.thread, step);
        line = { ...line, step };
      }
      return [line];
    });
}

/** Appends a line (a step's number is given when the journal is read, so none is written). */
export async function appendJournal(
  workspace: string,
  line: UndoRecord | RunRecord | Omit<StepRecord, "step">,
): Promise<void> {
  const file = openWorkspaceState(workspace).journal;
  ensureStateFolder(path.dirname(file));
  await appendFile(file, JSON.stringify(line) + "\n", { mode: 0o600 });
}

/** Records a run of `thread` and its flags; a journal that cannot be written costs only the record. */
export async function recordRun(workspace: string, thread: string, flags: string[]) {
  await appendJournal(workspace, {
    kind: "run",
    thread,
    flags,
    at: new Date().toISOString(),
  }).catch(() => undefined);
}

/** The flags of the thread's last run (`RunRecord`), or none. */
export function runFlags(lines: readonly JournalLine[], thread: string): string[] {
  const runs = lines.filter((l): l is RunRecord => l.kind === "run" && l.thread === thread);
  return runs.at(-1)?.flags ?? [];
}

/** A thread's steps not undone yet, in order. */
export function liveSteps(lines: readonly JournalLine[], thread: string): StepRecord[] {
  const undone = new Set(
    lines.flatMap((l) => (l.kind === "undo" && l.thread === thread ? l.steps : [])),
  );
  return lines.filter(
    (l): l is StepRecord => l.kind === "step" && l.thread === thread && !undone.has(l.step),
  );
}

/**
 * The default of keel undo and keel diff: the thread whose newest step that is not undone ran last
 * (undoing again goes on to the thread before), else the thread whose step ran last.
 */
export function lastThread(lines: readonly JournalLine[]): string | undefined {
  const undone = new Set(
    lines.flatMap((l) => (l.kind === "undo" ? l.steps.map((s) => `${l.thread}\0${s}`) : [])),
  );
  const steps = lines.filter((l): l is StepRecord => l.kind === "step");
  const live = steps.findLast((l) => !undone.has(`${l.thread}\0${l.step}`));
  return (live ?? steps.at(-1))?.thread;
}
