/**
 * The undo journal: one line per step that changed files (which files, their blobs before and
 * after, the conversation point) and one per undo, appended to `.keel/undo/steps.jsonl` next to the
 * shadow repository. Commands cannot write there (`.keel` is protected in the sandbox).
 */
import { existsSync } from "node:fs";
import { appendFile, readFile } from "node:fs/promises";
import path from "node:path";
import { SHADOW_DIR, type FileChange } from "./shadow.js";

export const JOURNAL = `${SHADOW_DIR}/steps.jsonl`;

export interface StepRecord {
  kind: "step";
  thread: string;
  /** Per thread, from 1, in the order the steps ran. */
  step: number;
  /** The tool call, and how many messages the conversation held when it ran (finds its checkpoint). */
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

export type JournalLine = StepRecord | UndoRecord;

export async function readJournal(workspace: string): Promise<JournalLine[]> {
  const file = path.join(workspace, JOURNAL);
  if (!existsSync(file)) return [];
  return (await readFile(file, "utf8"))
    .split("\n")
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as JournalLine];
      } catch {
        return []; // a line cut by a crash
      }
    });
}

export async function appendJournal(workspace: string, line: JournalLine): Promise<void> {
  await appendFile(path.join(workspace, JOURNAL), JSON.stringify(line) + "\n");
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

/** The next step number of a thread. */
export const nextStep = (lines: readonly JournalLine[], thread: string) =>
  1 +
  lines.reduce((n, l) => (l.kind === "step" && l.thread === thread ? Math.max(n, l.step) : n), 0);

/** The thread whose step ran last (the default of keel undo and keel diff). */
export function lastThread(lines: readonly JournalLine[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--)
    if (lines[i]!.kind === "step") return lines[i]!.thread;
  return undefined;
}
