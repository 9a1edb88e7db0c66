/**
 * Where an edit's old text is in a file, found by a cascade of deterministic steps, each more
 * forgiving than the last and each named in the result: exact → trailing whitespace ignored →
 * indentation ignored (new text re-indented to the file's) → escapes read (`\n`, `\"` written
 * literally) → first and last lines as anchors with the lines between alike. A step that finds two
 * places stops the cascade: an edit is applied only where it matches once. Pure: text in, text out.
 *
 * Small models get old text slightly wrong far more often than they get whole files wrong (Aider's
 * edit-format results); the steps are the kinds of wrong they get it (OpenCode's and Cline's
 * replacers go the same way).
 */
import { distance } from "fastest-levenshtein";

export const EDIT_STEPS = ["exact", "whitespace", "indentation", "escapes", "anchors"] as const;
export type EditStep = (typeof EDIT_STEPS)[number];

/** How each step matched, for messages. */
export const STEP_LABEL: Record<EditStep, string> = {
  exact: "exactly",
  whitespace: "ignoring trailing whitespace",
  indentation: "ignoring indentation",
  escapes: "reading escapes",
  anchors: "by first and last lines",
};

/** Lines (1-based, inclusive) where old text matched. */
export interface Place {
  from: number;
  to: number;
}

export type EditOutcome =
  | {
      ok: true;
      /** The file's new content (line endings and final newline as the file had them). */
      text: string;
      step: EditStep;
      /** Where the replaced text was in the file. */
      place: Place;
      /** What the step did, for the tool result ("" for an exact match). */
      note: string;
    }
  | { ok: false; reason: "unchanged" }
  | { ok: false; reason: "not_found"; closest?: Place & { likeness: number; text: string } }
  | { ok: false; reason: "ambiguous"; step: EditStep; places: Place[] };

/** How alike the lines between the anchors must be (1 − edit distance / length). */
export const ANCHOR_LIKENESS = 0.8;
/** The likeness under which no "closest text" is suggested. */
const CLOSEST_LIKENESS = 0.5;
/** Files longer than this get no "closest text" search (it compares every window). */
const CLOSEST_MAX_LINES = 5000;
/**
 * Most work the "closest text" search may do, in character pairs an edit distance compares (about
 * 32 per step: fastest-levenshtein's bit-parallel rows, a few tenths of a second at most), so the
 * search never holds the event loop:
 * a 1,000-line old text against a 5,000-line file would otherwise take minutes.
 */
const CLOSEST_MAX_PAIRS = 1e10;

/** Replaces the one place `oldText` means in `file` with `newText`. */
export function applyEdit(file: string, oldText: string, newText: string): EditOutcome {
  const crlf = file.includes("\r\n") && !/(^|[^\r])\n/.test(file);
  const lf = crlf ? file.replace(/\r\n/g, "\n") : file;
  const old = oldText.replace(/\r\n/g, "\n");
  const next = newText.replace(/\r\n/g, "\n");
  if (old === next) return { ok: false, reason: "unchanged" };
  const outcome = cascade(lf, old, next);
  if (outcome.ok && crlf) return { ...outcome, text: outcome.text.replace(/\n/g, "\r\n") };
  if (outcome.ok || outcome.reason !== "not_found") return outcome;
  const closest = closestPlace(lf.split("\n"), linesOf(old));
  return closest ? { ...outcome, closest } : outcome;
}

function cascade(file: string, old: string, next: string, escapes = true): EditOutcome {
  const exact = exactPlaces(file, old);
  if (exact.length > 1)
    return ambiguous(
      "exact",
      exact.map((i) => placeAt(file, i, old)),
    );
  if (exact.length === 1) {
    const i = exact[0]!;
    return {
      ok: true,
      step: "exact",
      text: file.slice(0, i) + next + file.slice(i + old.length),
      place: placeAt(file, i, old),
      note: "",
    };
  }
  const lines = file.split("\n");
  const byLines = lineSteps(lines, linesOf(old), linesOf(next));
  if (byLines) return byLines;
  const unescaped = escapes ? unescape(old) : old;
  if (unescaped !== old) {
    const again = cascade(file, unescaped, unescape(next), false);
    if (again.ok)
      return {
        ...again,
        step: "escapes",
        note: joinNotes(
          'old_text had escapes written out (\\n, \\t, \\" …); they were read as the characters they stand for, in new_text too',
          again.note,
        ),
      };
    if (again.reason === "ambiguous") return { ...again, step: "escapes" };
  }
  return { ok: false, reason: "not_found" };
}

/** The line-based steps: trailing whitespace, indentation, anchors. Undefined: no match. */
function lineSteps(lines: string[], old: string[], next: string[]): EditOutcome | undefined {
  if (old.length === 0) return undefined;
  const trimEnd = matchLines(lines, old, (a, b) => a.trimEnd() === b.trimEnd());
  if (trimEnd.length > 1)
    return ambiguous(
      "whitespace",
      trimEnd.map((s) => span(s, old.length)),
    );
  if (trimEnd.length === 1)
    return replaceLines(lines, trimEnd[0]!, old.length, next, {
      step: "whitespace",
      note: "matched after ignoring trailing whitespace",
    });
  const trimmed = matchLines(lines, old, (a, b) => a.trim() === b.trim());
  if (trimmed.length > 1)
    return ambiguous(
      "indentation",
      trimmed.map((s) => span(s, old.length)),
    );
  if (trimmed.length === 1) {
    const start = trimmed[0]!;
    return replaceLines(
      lines,
      start,
      old.length,
      reindent(next, old, lines.slice(start, start + old.length)),
      {
        step: "indentation",
        note: "matched after normalising indentation; new_text was re-indented to the file's",
      },
    );
  }
  const anchored = anchorMatches(lines, old);
  if (anchored.length > 1)
    return ambiguous(
      "anchors",
      anchored.map((m) => span(m.start, m.length)),
    );
  if (anchored.length === 1) {
    const { start, length, likeness } = anchored[0]!;
    const was = lines.slice(start, start + length);
    return replaceLines(lines, start, length, reindent(next, old, was), {
      step: "anchors",
      note: `matched by its first and last lines; the lines between differed (${Math.round(likeness * 100)}% alike). The text replaced was:\n${was.join("\n")}`,
    });
  }
  return undefined;
}

/** Start offsets of every occurrence of `old` in `file`. */
function exactPlaces(file: string, old: string): number[] {
  const found: number[] = [];
  for (let i = file.indexOf(old); i !== -1; i = file.indexOf(old, i + 1)) found.push(i);
  return found;
}

function placeAt(file: string, offset: number, old: string): Place {
  const from = lineAt(file, offset);
  return { from, to: from + (old.replace(/\n$/, "").match(/\n/g)?.length ?? 0) };
}

const lineAt = (text: string, offset: number) =>
  (text.slice(0, offset).match(/\n/g)?.length ?? 0) + 1;

const span = (start: number, length: number): Place => ({
  from: start + 1,
  to: start + length,
});

const ambiguous = (step: EditStep, places: Place[]): EditOutcome => ({
  ok: false,
  reason: "ambiguous",
  step,
  places,
});

/**
 * A text as lines for the line steps: a final newline and blank lines at either end do not count
 * (models add and drop them freely).
 */
export function linesOf(text: string): string[] {
  const lines = text.split("\n");
  while (lines.length && lines[0]!.trim() === "") lines.shift();
  while (lines.length && lines[lines.length - 1]!.trim() === "") lines.pop();
  return lines;
}

function matchLines(
  lines: string[],
  old: string[],
  same: (fileLine: string, oldLine: string) => boolean,
): number[] {
  const starts: number[] = [];
  for (let i = 0; i + old.length <= lines.length; i++) {
    let all = true;
    for (let k = 0; k < old.length && all; k++) all = same(lines[i + k]!, old[k]!);
    if (all) starts.push(i);
  }
  return starts;
}

function replaceLines(
  lines: string[],
  start: number,
  length: number,
  next: string[],
  how: { step: EditStep; note: string },
): EditOutcome {
  const out = [...lines.slice(0, start), ...next, ...lines.slice(start + length)];
  return { ok: true, text: out.join("\n"), place: span(start, length), ...how };
}

const indentOf = (line: string) => /^[ \t]*/.exec(line)![0];

/**
 * New lines re-indented from the old text's indentation to the file's. When the matched lines'
 * indentation maps linearly (the file's = its base + the old's depth × a scale: 2 spaces → 4, 4
 * spaces → a tab), every new line is mapped the same way, in the file's indent character. Otherwise
 * (the model flattened the text) each new line takes the indentation of the file line at its
 * position, plus whatever it adds over the old line there.
 */
export function reindent(next: string[], old: string[], file: string[]): string[] {
  const pairs = old
    .map((l, i) => ({ old: indentOf(l), file: indentOf(file[i] ?? ""), blank: l.trim() === "" }))
    .filter((p) => !p.blank);
  if (pairs.length === 0) return next;
  const base = pairs[0]!;
  const deep = pairs.find((p) => p.old.length !== base.old.length);
  const scale = deep
    ? (deep.file.length - base.file.length) / (deep.old.length - base.old.length)
    : 1;
  const unit = pairs.some((p) => p.file.includes("\t")) ? "\t" : " ";
  const width = (own: number) => base.file.length + (own - base.old.length) * scale;
  const linear =
    scale > 0 &&
    pairs.every((p) => width(p.old.length) === p.file.length) &&
    next.every(
      (l) =>
        l.trim() === "" ||
        (Number.isInteger(width(indentOf(l).length)) && width(indentOf(l).length) >= 0),
    );
  return next.map((line, j) => {
    if (line.trim() === "") return "";
    const own = indentOf(line);
    if (linear) return unit.repeat(width(own.length)) + line.trimStart();
    const at = Math.min(j, old.length - 1);
    const was = indentOf(old[at]!);
    const is = indentOf(file[at] ?? "");
    return is + (own.startsWith(was) ? own.slice(was.length) : "") + line.trimStart();
  });
}

/** 1 − edit distance / the longer length: 1 for equal texts. */
export function likeness(a: string, b: string): number {
  const longer = Math.max(a.length, b.length);
  return longer === 0 ? 1 : 1 - distance(a, b) / longer;
}

const middle = (lines: string[]) =>
  lines
    .slice(1, -1)
    .map((l) => l.trim())
    .join("\n");

/**
 * Blocks whose first and last lines equal the old text's (trimmed), at most a quarter longer or
 * shorter, with the lines between at least ANCHOR_LIKENESS alike. Needs three lines: with fewer
 * there is nothing between the anchors to compare.
 */
function anchorMatches(
  lines: string[],
  old: string[],
): Array<{ start: number; length: number; likeness: number }> {
  if (old.length < 3) return [];
  const first = old[0]!.trim();
  const last = old[old.length - 1]!.trim();
  const slack = Math.max(1, Math.floor(old.length / 4));
  const between = middle(old);
  const found: Array<{ start: number; length: number; likeness: number }> = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== first) continue;
    let best: { start: number; length: number; likeness: number } | undefined;
    for (let n = Math.max(3, old.length - slack); n <= old.length + slack; n++) {
      if (i + n > lines.length || lines[i + n - 1]!.trim() !== last) continue;
      const alike = likeness(middle(lines.slice(i, i + n)), between);
      if (alike >= ANCHOR_LIKENESS && (!best || alike > best.likeness))
        best = { start: i, length: n, likeness: alike };
    }
    if (best) found.push(best);
  }
  return found;
}

/** The window of the file most like the old text, when it is at least half alike. */
function closestPlace(
  lines: string[],
  old: string[],
): (Place & { likeness: number; text: string }) | undefined {
  if (old.length === 0 || lines.length > CLOSEST_MAX_LINES) return undefined;
  const want = old.map((l) => l.trim()).join("\n");
  if ((lines.length - old.length + 1) * want.length * want.length > CLOSEST_MAX_PAIRS)
    return undefined;
  let best: { start: number; likeness: number } | undefined;
  for (let i = 0; i + old.length <= lines.length; i++) {
    const window = lines
      .slice(i, i + old.length)
      .map((l) => l.trim())
      .join("\n");
    const alike = likeness(window, want);
    if (!best || alike > best.likeness) best = { start: i, likeness: alike };
  }
  if (!best || best.likeness < CLOSEST_LIKENESS) return undefined;
  return {
    ...span(best.start, old.length),
    likeness: best.likeness,
    text: lines.slice(best.start, best.start + old.length).join("\n"),
  };
}

const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  '"': '"',
  "'": "'",
  "\\": "\\",
};

/** Text with JSON-style escapes written out (`\n`, `\"`) read as what they stand for. */
export function unescape(text: string): string {
  return text.replace(/\\([ntr"'\\])/g, (_, c: string) => ESCAPES[c]!);
}

const joinNotes = (...notes: string[]) => notes.filter(Boolean).join("; ");

/** "lines 3-5 and lines 12-14" */
export function describePlaces(places: Place[]): string {
  return places
    .map((p) => (p.from === p.to ? `line ${p.from}` : `lines ${p.from}-${p.to}`))
    .join(places.length === 2 ? " and " : ", ");
}
