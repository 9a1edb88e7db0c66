/**
 * Searches of the reply being read that remember their answers, so that a text is scanned about
 * once per needle however many readers and openers ask: the last answer per text and needle is
 * kept, and a later question from a point before that answer gets it without a scan.
 */
import { charge } from "./meter.js";

/** Per text and needle, the last search: from where, and what it found (`find`, `findRe`). */
const searches = new Map<string, Map<string, { from: number; at: number; length: number }>>();
/** How many texts (a reply, its bodies) are remembered at once. */
const REMEMBERED_TEXTS = 4;

/** The memo of `text` in `memos`, made (and an old text's dropped) when missing. */
export function memoOf<V>(memos: Map<string, V>, text: string, make: () => V): V {
  let m = memos.get(text);
  if (!m) {
    if (memos.size >= REMEMBERED_TEXTS) memos.delete(memos.keys().next().value!);
    memos.set(text, (m = make()));
  }
  return m;
}

/**
 * `text.indexOf(needle, from)`, remembering the last answer per needle: a reader asking again
 * from a later point before that answer gets it without a scan (each text is scanned about once
 * per needle, however many openers ask for their close).
 */
export function find(text: string, needle: string, from: number): number {
  return search(text, needle, from, () => {
    const at = text.indexOf(needle, from);
    return { at, length: needle.length };
  }).at;
}

/** The first match of `re` at or after `from` (where, and how long; at -1: none), as `find` does. */
export function findRe(text: string, re: RegExp, from: number): { at: number; length: number } {
  return search(text, `/${re.source}/${re.flags}`, from, () => {
    const g = new RegExp(re.source, re.flags.includes("g") ? re.flags : `${re.flags}g`);
    g.lastIndex = from;
    const m = g.exec(text);
    return m ? { at: m.index, length: m[0].length } : { at: -1, length: 0 };
  });
}

function search(
  text: string,
  key: string,
  from: number,
  scan: () => { at: number; length: number },
): { at: number; length: number } {
  const byKey = memoOf(
    searches,
    text,
    () => new Map<string, { from: number; at: number; length: number }>(),
  );
  const last = byKey.get(key);
  if (last && from >= last.from && (last.at < 0 || from <= last.at)) return last;
  const found = scan();
  charge((found.at < 0 ? text.length : found.at + found.length) - from + 1);
  byKey.set(key, { from, ...found });
  return found;
}

/** Starts a new reply: its searches are forgotten. */
export function forgetSearches(): void {
  searches.clear();
}
