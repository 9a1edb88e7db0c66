/**
 * grep's patterns, matched in linear time: a JavaScript regular expression is checked as such,
 * then translated for RE2 (re2js, a pure-JavaScript port of Google's RE2), which never backtracks —
 * `^(a+)+$` on a line of `a`s costs the line's length, not 2^40 steps. What RE2 cannot run in
 * linear time (backreferences, lookahead) is refused with the reason, for the model to rewrite.
 * Pure: a pattern in, a compiled matcher's source or a refusal out.
 */
import { RE2JS } from "re2js";

/** The flags grep's patterns are compiled with (captureless lookbehinds run in linear time). */
export const GREP_FLAGS = RE2JS.LOOKBEHINDS;

/** What RE2 has no linear-time way to run, as a JavaScript pattern writes it, and what to do. */
const UNSUPPORTED: Array<{ what: RegExp; name: string; instead: string }> = [
  {
    what: /^\\[1-9]/,
    name: "a backreference (\\1)",
    instead: "match the repeated text literally, or search for one part and read the lines",
  },
  {
    what: /^\(\?[=!]/,
    name: "a lookahead ((?=…) or (?!…))",
    instead: "match the text itself, or search more widely and read the lines",
  },
];

/** `\k<name>` is a backreference where the pattern names a group (else the letter k). */
const NAMED_BACKREFERENCE = {
  what: /^\\k</,
  name: "a named backreference (\\k<name>)",
  instead: UNSUPPORTED[0]!.instead,
};

/**
 * The RE2 source for a grep pattern, or why it cannot be run. `invalid`: not a JavaScript regular
 * expression at all; `unsupported`: valid, but it needs backtracking, which RE2 refuses.
 */
export function grepSource(
  pattern: string,
): { source: string } | { invalid: string } | { unsupported: string } {
  try {
    new RegExp(pattern);
  } catch (e) {
    return { invalid: (e as Error).message };
  }
  const kinds = /\(\?<[A-Za-z_$]/.test(pattern)
    ? [...UNSUPPORTED, NAMED_BACKREFERENCE]
    : UNSUPPORTED;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const hit = inClass ? undefined : kinds.find((u) => u.what.test(pattern.slice(i, i + 4)));
    if (hit)
      return {
        unsupported: `${hit.name} cannot be matched in linear time, and grep matches only in linear time (RE2) so that no pattern can hang it; ${hit.instead}`,
      };
    const ch = pattern[i];
    if (ch === "\\") i++;
    else if (ch === "[") inClass = true;
    else if (ch === "]") inClass = false;
  }
  const source = RE2JS.translateRegExp(pattern);
  try {
    RE2JS.compile(source, GREP_FLAGS);
  } catch (e) {
    return {
      unsupported: `the linear-time engine (RE2) does not take this pattern: ${(e as Error).message}`,
    };
  }
  return { source };
}
