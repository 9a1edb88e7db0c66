/**
 * Tool descriptions that learn, pure. Each run leaves a tally (per tool: calls, and misuses of the
 * kinds below); when a model misuses a tool the same way in several threads, that tool's description
 * gets one line of right-vs-wrong usage for that model. The line stays while it helps: once enough
 * calls were made with it shown, the misuse rate with it is compared to the rate without it, and a
 * line that did not lower it is retired.
 */
import type { ToolFailureKind } from "../../tools/types.js";
import type { RunRecord } from "./run-record.js";

/** A misuse keel can teach against: a tool ("*": any) failing with a kind. */
export interface Lesson {
  id: string;
  tool: string;
  kind: ToolFailureKind;
  /** The line added to the description; `{tool}` and `{fields}` are filled in. */
  line: string;
}

export const LESSONS: readonly Lesson[] = [
  {
    id: "make_dir-file",
    tool: "make_dir",
    kind: "wrong_tool",
    line: 'Right: make_dir {"path": "src"}. Wrong: make_dir {"path": "src/app.js"}: files are created with write_file.',
  },
  {
    id: "edit_file-unread",
    tool: "edit_file",
    kind: "refused",
    line: "Right: read_file on the file, then edit_file. Wrong: edit_file on a file not read in this conversation.",
  },
  {
    id: "edit_file-miss",
    tool: "edit_file",
    kind: "failed",
    line: "Right: old_text copied exactly from read_file's output, with a few lines of context. Wrong: old_text retyped from memory.",
  },
  {
    id: "read_file-folder",
    tool: "read_file",
    kind: "wrong_tool",
    line: 'Right: list_dir {"path": "src"} for a folder. Wrong: read_file {"path": "src"}.',
  },
  {
    id: "read_file-guess",
    tool: "read_file",
    kind: "not_found",
    line: "Right: list_dir or glob first, then read_file on a path they showed. Wrong: read_file on a guessed path.",
  },
  {
    id: "write_file-folder",
    tool: "write_file",
    kind: "wrong_tool",
    line: 'Right: write_file {"path": "src/index.js", "content": "..."}. Wrong: write_file on a folder path.',
  },
  {
    id: "run_command-write",
    tool: "run_command",
    kind: "refused",
    line: "Right: write_file with the full content to create a file. Wrong: run_command with echo/cat > file.",
  },
  {
    id: "args",
    tool: "*",
    kind: "invalid_arguments",
    line: "Right: {tool} with exactly these fields and types: {fields}. Wrong: other field names, or missing fields.",
  },
  {
    id: "outside",
    tool: "*",
    kind: "outside_workspace",
    line: 'Right: paths relative to the workspace, e.g. "src/app.py". Wrong: absolute paths, "..", or "~".',
  },
];

/** Misuses of one lesson across threads before a line is added. */
export const LEARN_MIN_MISUSES = 3;
export const LEARN_MIN_THREADS = 2;
/** Calls of the tool with the line shown before its effect is judged. */
export const JUDGE_AFTER_CALLS = 10;

/** What one run leaves for learning (the store's ledger, one item per run). */
export interface Tally {
  thread: string;
  at: string;
  /** Per tool: calls, and misuses by lesson key (`lessonId` or `lessonId:tool` for "*" lessons). */
  tools: Record<string, { calls: number; misuses: Record<string, number> }>;
  /** Lesson keys shown in this run's descriptions. */
  shown: string[];
}

const keyOf = (lesson: Lesson, tool: string) =>
  lesson.tool === "*" ? `${lesson.id}:${tool}` : lesson.id;

/** The run's tally, from its record and the lessons it was shown. */
export function tallyOf(run: RunRecord, shown: readonly string[]): Tally {
  const tools: Tally["tools"] = {};
  for (const c of run.calls) {
    const t = (tools[c.tool] ??= { calls: 0, misuses: {} });
    t.calls++;
    if (c.ok || !c.kind) continue;
    const lesson = LESSONS.find((l) => (l.tool === c.tool || l.tool === "*") && l.kind === c.kind);
    if (lesson) {
      const key = keyOf(lesson, c.tool);
      t.misuses[key] = (t.misuses[key] ?? 0) + 1;
    }
  }
  return { thread: run.thread, at: run.at, tools, shown: [...shown] };
}

export interface LessonState {
  key: string;
  tool: string;
  line: string;
  status: "active" | "retired";
  /** Misuses per call of the tool without the line shown, and with it. */
  before: { calls: number; misuses: number };
  after: { calls: number; misuses: number };
}

const rate = (x: { calls: number; misuses: number }) => (x.calls ? x.misuses / x.calls : 0);

/**
 * Every lesson a model has earned from its tallies, active or retired. `fields(tool)` describes a
 * tool's parameters for the "*" lessons.
 */
export function judgeLessons(
  tallies: readonly Tally[],
  fields: (tool: string) => string,
): LessonState[] {
  const keys = new Map<string, { lesson: Lesson; tool: string }>();
  for (const t of tallies)
    for (const [tool, v] of Object.entries(t.tools))
      for (const key of Object.keys(v.misuses)) {
        const lesson = LESSONS.find((l) => key === l.id || key.startsWith(`${l.id}:`));
        if (lesson) keys.set(key, { lesson, tool });
      }
  const out: LessonState[] = [];
  for (const [key, { lesson, tool }] of keys) {
    const before = { calls: 0, misuses: 0 };
    const after = { calls: 0, misuses: 0 };
    const threads = new Set<string>();
    for (const t of tallies) {
      const v = t.tools[tool];
      if (!v) continue;
      const side = t.shown.includes(key) ? after : before;
      side.calls += v.calls;
      side.misuses += v.misuses[key] ?? 0;
      if (!t.shown.includes(key) && v.misuses[key]) threads.add(t.thread);
    }
    if (before.misuses < LEARN_MIN_MISUSES || threads.size < LEARN_MIN_THREADS) continue;
    const judged = after.calls >= JUDGE_AFTER_CALLS;
    out.push({
      key,
      tool,
      line: lesson.line.replaceAll("{tool}", tool).replaceAll("{fields}", fields(tool)),
      status: judged && rate(after) >= rate(before) ? "retired" : "active",
      before,
      after,
    });
  }
  return out.sort((a, b) => a.key.localeCompare(b.key));
}

/** The lines a run shows: one per tool, the active lesson with the most misuses. */
export function activeLines(
  states: readonly LessonState[],
): Record<string, { key: string; line: string }> {
  const out: Record<string, { key: string; line: string; misuses: number }> = {};
  for (const s of states) {
    if (s.status !== "active") continue;
    const have = out[s.tool];
    if (!have || s.before.misuses > have.misuses)
      out[s.tool] = { key: s.key, line: s.line, misuses: s.before.misuses };
  }
  return Object.fromEntries(Object.entries(out).map(([t, { key, line }]) => [t, { key, line }]));
}
