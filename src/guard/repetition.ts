/**
 * Repeated text in the model's replies: a reply that repeats one sentence or line over and over
 * (degenerate decoding, common in small quantised models), or the same reply as the previous ones.
 * Pure.
 */

const MIN_UNIT = 15;

/** Describes the repetition in `text`, or returns undefined. `previous` are earlier reply texts, newest last. */
export function findRepetition(
  text: string,
  previous: readonly string[] = [],
  times = 3,
): string | undefined {
  const t = text.trim();
  if (t.length < MIN_UNIT) return undefined;
  const units = t
    .split(/(?<=[.!?])\s+|\n+/)
    .map((u) => u.trim().toLowerCase())
    .filter((u) => u.length >= MIN_UNIT);
  const counts = new Map<string, number>();
  for (const u of units) counts.set(u, (counts.get(u) ?? 0) + 1);
  for (const [unit, n] of counts) {
    if (n >= times) return `the same sentence ${n} times in one reply: "${unit.slice(0, 80)}"`;
  }
  const norm = (s: string) => s.trim().replace(/\s+/g, " ").toLowerCase();
  const same = previous.filter((p) => norm(p) === norm(t)).length;
  if (same + 1 >= times - 1 && same > 0)
    return `the same reply ${same + 1} times: "${t.slice(0, 80)}"`;
  return undefined;
}

/** A loop's unit is at most `LOOP_PERIOD` long; the tail repeats it `LOOP_REPEATS` times, over `LOOP_SPAN` characters or more. */
const LOOP_PERIOD = 200;
const LOOP_REPEATS = 10;
const LOOP_SPAN = 1000;

/**
 * A reply whose tail is one unit over and over (degenerate decoding: "the the the", a line or a
 * sentence repeated without end) while it is still being generated: the unit, and where the loop
 * began (the reply up to there and one unit is what it said). Read on the streamed text, so a loop
 * is stopped after a few hundred characters, not at the generation budget minutes later. A unit of
 * up to 200 characters repeated 10 times in a row over at least 1,000 characters: no file or answer
 * holds that (a table of identical rows is not a line repeated 8 times with nothing between).
 * `prose`, the reply's content and thinking without its call arguments, is also read for a
 * sentence under a changing counter. `start` is in `text`, or in `prose` for that loop.
 */
export function loopingTail(
  text: string,
  prose?: string,
): { unit: string; start: number } | undefined {
  return (
    periodicTail(text) ??
    fewUnitsTail(text) ??
    (prose === undefined ? undefined : fewUnitsTail(prose, COUNTED_PROSE))
  );
}

/** The tail is one unit repeated exactly. */
function periodicTail(text: string): { unit: string; start: number } | undefined {
  const n = text.length;
  for (let p = 1; p <= LOOP_PERIOD; p++) {
    const span = Math.max(LOOP_SPAN, LOOP_REPEATS * p);
    if (span > n) break;
    let i = n - 1;
    while (i >= n - span + p && text.charCodeAt(i) === text.charCodeAt(i - p)) i--;
    if (i >= n - span + p) continue;
    // the loop goes back further than the span: find where it began
    let start = n - span;
    while (start > 0 && text.charCodeAt(start - 1) === text.charCodeAt(start - 1 + p)) start--;
    return { unit: text.slice(start, start + p), start };
  }
  return undefined;
}

/** How the few-units look reads a tail: what makes a loop, and what a unit counts as. */
interface FewUnitsRule {
  /** Units the loop holds at least. */
  units: number;
  /** Distinct units it holds at most. */
  distinct: number;
  /** Characters it spans at least. */
  span: number;
  /** What a unit counts as (units with the same key are one); undefined: no loop reaches past it. */
  key: (unit: string, inCode: boolean) => string | undefined;
}

/**
 * A few units in varying order ("<|im_end|>" and "<|im_start|>user" lines mixed, a sentence and
 * its variant, a sentence under a counting number — "211. Create hello.py that prints hello"): at
 * least 12 units over the last 1,000+ characters, at most 3 of them distinct. Only a leading list
 * number is ignored: lines that differ elsewhere in their numbers (`const v7 = f(7);`,
 * `- src/module7/index.ts`) stay distinct.
 */
const FEW_UNITS: FewUnitsRule = {
  units: 12,
  distinct: 3,
  span: LOOP_SPAN,
  key: (t) => t.replace(/^\d+[.)]\s*/, "#. "),
};

/** Words of letters only (a path, a number or a symbol is not one) a unit of prose holds. */
const PROSE_WORDS = 4;

/**
 * A sentence repeated with a counter that changes ("Turn 7: I will read the file", "You have 6
 * turns left…"): the same prose but for its numbers, at least 24 times over the last 3,000+
 * characters, at most 2 forms. Read on the reply's prose only — content and thinking, never call
 * arguments — and never inside a code fence: code, seed data (`INSERT … VALUES (7, 'User 7')`)
 * and tables differ in nothing but their numbers and are not loops. A unit with fewer than 4
 * words (a table row, a path) ends the look.
 */
const COUNTED_PROSE: FewUnitsRule = {
  units: 24,
  distinct: 2,
  span: 3_000,
  key: (t, inCode) =>
    inCode || t.split(/\s+/).filter((w) => /^[\p{L}]+[,.;:!?]?$/u.test(w)).length < PROSE_WORDS
      ? undefined
      : t.replace(/\d+/g, "#"),
};

/** The tail is a few units in varying order, as `rule` reads them: the unit most frequent, and where those units began. */
function fewUnitsTail(
  text: string,
  rule: FewUnitsRule = FEW_UNITS,
): { unit: string; start: number } | undefined {
  const units: Array<{ key: string | undefined; at: number; said: string }> = [];
  // Lines, and the sentences of a long line (a reply of prose without line breaks), of the last
  // 16,000 characters: a look costs the same however long the reply has grown.
  const base = Math.max(0, text.length - 16_000);
  let inCode = false;
  for (const m of text.slice(base).matchAll(/[^\n]{1,200}(?=\n|$)|[^\n.!?]*(?:[.!?]+|\n|$)/g)) {
    const t = m[0].trim();
    if (t.startsWith("```")) inCode = !inCode;
    else if (t.length >= 2) units.push({ key: rule.key(t, inCode), at: base + m.index, said: t });
  }
  let from = units.length;
  const seen = new Map<string, number>();
  while (from > 0) {
    const u = units[from - 1]!.key;
    if (u === undefined || (!seen.has(u) && seen.size === rule.distinct)) break;
    seen.set(u, (seen.get(u) ?? 0) + 1);
    from--;
  }
  if (units.length - from < rule.units || from === units.length) return undefined;
  const start = units[from]!.at;
  if (text.length - start < rule.span) return undefined;
  // The most frequent unit, as the reply last wrote it (its numbers and all).
  const most = [...seen].sort((a, b) => b[1] - a[1])[0]![0];
  const unit = units.findLast((u) => u.key === most)!.said;
  return { unit, start };
}
