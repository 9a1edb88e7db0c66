/**
 * What an undo does to each file, pure: the steps being undone (oldest first) and each file's blob
 * on disk now → restore it to what it was before the first of those steps, remove it if a step
 * created it, or leave it alone because it changed after the agent's last step (a person's edit is
 * never overwritten).
 */
import { printableName } from "../printable.js";
import type { StepRecord } from "./journal.js";

export type UndoAction =
  | { path: string; action: "restore"; blob: string; steps: number[] }
  | { path: string; action: "remove"; steps: number[] }
  | { path: string; action: "keep"; steps: number[]; reason: string };

/** The files the steps touched, each with its first "before" and last "after". */
export function touched(steps: readonly StepRecord[]) {
  const files = new Map<string, { before: string | null; after: string | null; steps: number[] }>();
  for (const s of steps)
    for (const f of s.files) {
      const seen = files.get(f.path);
      if (seen) {
        seen.after = f.after;
        seen.steps.push(s.step);
      } else files.set(f.path, { before: f.before, after: f.after, steps: [s.step] });
    }
  return files;
}

/**
 * `current`: each touched file's blob now (null: absent). Files already back as they were need
 * nothing and are left out.
 */
export function planUndo(
  steps: readonly StepRecord[],
  current: ReadonlyMap<string, string | null>,
): UndoAction[] {
  const actions: UndoAction[] = [];
  for (const [path, f] of touched(steps)) {
    const now = current.get(path) ?? null;
    if (now === f.before) continue;
    if (now !== f.after) {
      const last = f.steps[f.steps.length - 1]!;
      actions.push({
        path,
        action: "keep",
        steps: f.steps,
        reason:
          now === null
            ? `deleted since step ${last} (not by the agent); left as it is`
            : `changed since step ${last} (not by the agent); left as it is`,
      });
    } else if (f.before === null) actions.push({ path, action: "remove", steps: f.steps });
    else actions.push({ path, action: "restore", blob: f.before, steps: f.steps });
  }
  return actions.sort((a, b) => a.path.localeCompare(b.path));
}

/** One line of the preview (the file's name with its control characters as codes). */
export function describeAction(a: UndoAction): string {
  const at = `step${a.steps.length > 1 ? "s" : ""} ${a.steps.join(", ")}`;
  const name = printableName(a.path);
  switch (a.action) {
    case "restore":
      return `restore ${name} (changed at ${at})`;
    case "remove":
      return `remove  ${name} (created at ${at})`;
    case "keep":
      return `keep    ${name}: ${a.reason}`;
  }
}
