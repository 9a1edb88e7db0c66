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
 */
export function loopingTail(text: string): { unit: string; start: number } | undefined {
  return periodicTail(text) ?? fewUnitsTail(text);
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

/** Units (lines, sentences) the near-loop look reads, and how few distinct ones make a loop. */
const LOOP_UNITS = 12;
const LOOP_DISTINCT = 3;

/**
 * The tail is a few units in varying order ("<|im_end|>" and "<|im_start|>user" lines mixed, a
 * sentence and its variant, a sentence under a counting number — "211. Create hello.py that prints
 * hello"): at least 12 units over the last 1,000+ characters, at most 3 of them distinct. Only a
 * leading list number is ignored: lines that differ elsewhere in their numbers (`const v7 = f(7);`,
 * `- src/module7/index.ts`) stay distinct. The unit is the most frequent; the loop begins where
 * those units began.
 */
function fewUnitsTail(text: string): { unit: string; start: number } | undefined {
  const units: Array<{ text: string; at: number; said: string }> = [];
  // Lines, and the sentences of a long line (a reply of prose without line breaks), of the last
  // 16,000 characters: a look costs the same however long the reply has grown.
  const base = Math.max(0, text.length - 16_000);
  for (const m of text.slice(base).matchAll(/[^\n]{1,200}(?=\n|$)|[^\n.!?]*(?:[.!?]+|\n|$)/g)) {
    const t = m[0].trim();
    // A list's counting number is not part of what it repeats.
    if (t.length >= 2)
      units.push({ text: t.replace(/^\d+[.)]\s*/, "#. "), at: base + m.index, said: t });
  }
  let from = units.length;
  const seen = new Map<string, number>();
  while (from > 0) {
    const u = units[from - 1]!.text;
    if (!seen.has(u) && seen.size === LOOP_DISTINCT) break;
    seen.set(u, (seen.get(u) ?? 0) + 1);
    from--;
  }
  if (units.length - from < LOOP_UNITS || from === units.length) return undefined;
  const start = units[from]!.at;
  if (text.length - start < LOOP_SPAN) return undefined;
  // The most frequent unit, as the reply last wrote it (its list number and all).
  const most = [...seen].sort((a, b) => b[1] - a[1])[0]![0];
  const unit = units.findLast((u) => u.text === most)!.said;
  return { unit, start };
}
