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

/**
 * A loop's unit and how often the tail repeats it: a short unit (a word, a line, a sentence) 10
 * times over 1,000+ characters; a long one (the paragraph a reasoning model goes round in) 4 times
 * over 2,000+.
 */
const SHORT_PERIOD = 200;
const SHORT_REPEATS = 10;
const LOOP_SPAN = 1000;
const LONG_PERIOD = 2000;
const LONG_REPEATS = 4;
const LONG_SPAN = 2000;

/** Where loops are found in a reply, and what the loop said once. */
export interface Loop {
  unit: string;
  /** Where the loop began: in `text`, or in `prose` for a loop only the prose shows. */
  start: number;
}

/**
 * A reply whose tail is one unit over and over (degenerate decoding: "the the the", a line, a
 * sentence or a paragraph repeated without end) while it is still being generated: the unit, and
 * where the loop began (the reply up to there and one unit is what it said). Read on the streamed
 * text, so a loop is stopped after a few hundred characters, not at the generation budget minutes
 * later. No file or answer holds a line repeated 10 times with nothing between; rows of numbers or
 * of box-drawing characters (a tile map, a framebuffer, an empty mock-up frame) are data, not a loop.
 * `prose`, the reply's content and thinking without its call arguments, is also read for sentences
 * that go round with a changing counter (`COUNTED_PROSE`).
 */
export function loopingTail(text: string, prose?: string): Loop | undefined {
  return (
    periodicTail(text) ??
    fewUnitsTail(text, FEW_UNITS) ??
    (prose === undefined ? undefined : fewUnitsTail(prose, COUNTED_PROSE))
  );
}

/** A unit of data: digits with punctuation and brackets (`0x00, `, `[1, 0, 0],`), or box-drawing lines. */
const isData = (unit: string) =>
  (/\d/.test(unit) && /^[\s\d,.;:xX[\](){}+-]*$/.test(unit)) ||
  (/\S/.test(unit) && /^[\s\u2500-\u257f|+=_-]*$/.test(unit));

/** The tail is one unit repeated exactly. */
function periodicTail(text: string): Loop | undefined {
  const n = text.length;
  for (let p = 1; p <= LONG_PERIOD; p++) {
    const span =
      p <= SHORT_PERIOD
        ? Math.max(LOOP_SPAN, SHORT_REPEATS * p)
        : Math.max(LONG_SPAN, LONG_REPEATS * p);
    if (span > n) break;
    let i = n - 1;
    while (i >= n - span + p && text.charCodeAt(i) === text.charCodeAt(i - p)) i--;
    if (i >= n - span + p) continue;
    // the loop goes back further than the span: find where it began
    let start = n - span;
    while (start > 0 && text.charCodeAt(start - 1) === text.charCodeAt(start - 1 + p)) start--;
    const unit = text.slice(start, start + p);
    if (!isData(unit)) return { unit, start };
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
  /** Units that go round in a cycle of at most this many make a loop too (0: none). */
  cycle: number;
  /**
   * What a unit counts as (units with the same key are one): undefined ends the look; a `minor`
   * unit (a heading, "Hmm.") ends the few-distinct look but may be part of a cycle.
   */
  key: (unit: string, inCode: boolean) => { key: string; minor?: boolean } | undefined;
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
  cycle: 0,
  key: (t) => (isData(t) ? undefined : { key: t.replace(/^\d+[.)]\s*/, "#. ") }),
};

/** Words a unit of prose holds: words of letters only (a path or a number is not one), and CJK text at two characters a word. */
function proseWords(t: string): number {
  let n = t.split(/\s+/).filter((w) => /^\p{L}+[,.;:!?]?$/u.test(w)).length;
  for (const m of t.matchAll(
    /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu,
  ))
    n += Math.ceil(m[0].length / 2);
  return n;
}

/** Lines of structure rather than prose: table rows, log and lint lines, CSV, diff lines, SQL. */
const STRUCTURED = /^(\||\[|\d+(?!\d|[.)]\s)|[+-](?!\s)|(INSERT|UPDATE|SELECT|CREATE|DELETE)\b)/i;

/**
 * Sentences that go round with a changing counter ("Turn 7: I will read the file", "You have 6
 * turns left…", two or three such sentences in turn, a heading or "Hmm." between them): at least
 * 48 sentences of 4+ words over the last 6,000+ characters that are at most 2 forms, or a cycle of
 * at most 6 forms, once their numbers are set aside. Read on the reply's prose only — content and
 * thinking, never call arguments — and never inside a code fence or a call written as text: code,
 * seed data (`INSERT … VALUES (7, 'User 7')`) and tables differ in nothing but their numbers and
 * are not loops. An answer going through 40 generated files one line each is not a loop either,
 * hence the length: a counted loop is stopped at about 6,000 characters (1,500 tokens), not at the
 * 8,192-token budget. Structured lines (table rows, logs, CSV, diffs, SQL) end the look.
 */
const COUNTED_PROSE: FewUnitsRule = {
  units: 48,
  distinct: 2,
  span: 6_000,
  cycle: 6,
  key: (t, inCode) => {
    if (inCode) return undefined;
    const key = t.replace(/\d+/g, "#");
    return proseWords(t) < 4 || STRUCTURED.test(t) ? { key, minor: true } : { key };
  },
};

/** A call written as text (prompt mode) opens and closes on these: its body is read as code. */
const CALL_OPEN = /^<\|?(tool_call|function[=_ ]|invoke\b|minimax:tool_call|toolcall\b)/i;
const CALL_CLOSE =
  /<\/(tool_call|function(_call)?|invoke|minimax:tool_call|toolcall)>|<\|tool_call_end\|>/i;

/** A unit of the tail: what the rule counts it as, where it starts, and what it said. */
interface Unit {
  key: string | undefined;
  minor: boolean;
  at: number;
  said: string;
}

/** The last 16,000 characters in units (lines, and the sentences of a long line), as `rule` keys them. */
function unitsOf(text: string, rule: FewUnitsRule): Unit[] {
  const units: Unit[] = [];
  const base = Math.max(0, text.length - 16_000);
  // Whether the window starts inside a code fence: the fences before it, counted once.
  let inCode = (text.slice(0, base).match(/^[ \t]*```/gm)?.length ?? 0) % 2 === 1;
  let inCall = false;
  for (const m of text.slice(base).matchAll(/[^\n]{1,200}(?=\n|$)|[^\n.!?]*(?:[.!?]+|\n|$)/g)) {
    const t = m[0].trim();
    if (t.startsWith("```")) {
      inCode = !inCode;
      continue;
    }
    if (CALL_OPEN.test(t)) inCall = true;
    if (t.length >= 2) {
      const k = rule.key(t, inCode || inCall);
      units.push({ key: k?.key, minor: k?.minor ?? false, at: base + m.index, said: t });
    }
    if (inCall && CALL_CLOSE.test(t)) inCall = false;
  }
  return units;
}

/** The tail is a few units in varying order, or going round in a short cycle, as `rule` reads them. */
function fewUnitsTail(text: string, rule: FewUnitsRule): Loop | undefined {
  const units = unitsOf(text, rule);
  const from = fewDistinctFrom(units, rule) ?? cycleFrom(units, rule);
  if (from === undefined || text.length - units[from]!.at < rule.span) return undefined;
  // The most frequent unit, as the reply last wrote it (its numbers and all).
  const counts = new Map<string, number>();
  for (const u of units.slice(from))
    if (!u.minor) counts.set(u.key!, (counts.get(u.key!) ?? 0) + 1);
  const most = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
  return { unit: units.findLast((u) => u.key === most)!.said, start: units[from]!.at };
}

/** Where the tail's run of at most `rule.distinct` distinct units begins, if it is long enough. */
function fewDistinctFrom(units: readonly Unit[], rule: FewUnitsRule): number | undefined {
  let from = units.length;
  const seen = new Set<string>();
  while (from > 0) {
    const u = units[from - 1]!;
    if (u.key === undefined || u.minor || (!seen.has(u.key) && seen.size === rule.distinct)) break;
    seen.add(u.key);
    from--;
  }
  return units.length - from >= rule.units ? from : undefined;
}

/**
 * Where the tail's cycle begins: units whose keys repeat with a period of at most `rule.cycle`
 * (the last unit, still being written, aside), three rounds at least, a sentence in every round.
 */
function cycleFrom(units: readonly Unit[], rule: FewUnitsRule): number | undefined {
  for (let k = 1; k <= rule.cycle; k++) {
    let end = units.length - 1;
    if (end - k >= 0 && units[end]!.key !== units[end - k]!.key) end--;
    let i = end;
    while (i - k >= 0 && units[i]!.key !== undefined && units[i]!.key === units[i - k]!.key) i--;
    const first = i - k + 1;
    if (first < 0 || units[first]!.key === undefined) continue;
    const n = end - first + 1;
    if (n < rule.units || n < 3 * k) continue;
    if (units.slice(first, first + k).every((u) => u.minor)) continue;
    return first;
  }
  return undefined;
}
