/**
 * Glob patterns matched without backtracking. A glob compiles to a list of segment patterns, each
 * segment to a linear-time RE2 expression (re2js), and a path is matched segment by segment as a
 * set of states (a `**` absorbs whole segments), so `*a*a*…b` against a long name costs the name's
 * length times the pattern's, never an exponential search. Pure: patterns in, matchers out.
 *
 * The dialect is the one the walk used before (tinyglobby/picomatch with `dot: false`): `*` and
 * `?` within a segment, `**` for any number of segments, `[…]` classes (`[!…]` negated, POSIX
 * `[:alpha:]`), `{a,b}` and `{1..5}` braces, `\` escapes; a wildcard never matches a name that
 * starts with a dot unless the pattern writes the dot; a pattern that does not end in `*` also
 * matches everything under the folder it names (`src` lists `src/**`). Extended globs (`+(…)`,
 * `!(…)`) and negated patterns are refused with the reason.
 */
import { RE2JS } from "re2js";

/** Brace alternatives one glob may expand to; more is refused (`{a,b}{c,d}…` grows fast). */
export const MAX_BRACE_ALTERNATIVES = 256;

/** A segment pattern: `**`, or a name pattern compiled to RE2. */
type Segment = { globstar: true } | { globstar: false; re: RE2JS; literal?: string };

/** A compiled glob: where a walk may start, how deep it must go, and the matcher. */
export interface GlobMatcher {
  /** Leading folders every match lies under (posix, "" for none). */
  base: string;
  /** Most path segments below `base` a match can have (Infinity with `**`). */
  depth: number;
  /** Some segment writes a leading dot: the walk must enter dot folders. */
  dot: boolean;
  /** Whether a workspace-relative path (posix) matches. */
  matches(rel: string): boolean;
  /** Whether a folder (posix, relative) can hold a match: a walk prunes the others. */
  mayHold(rel: string): boolean;
}

/** Compiles a glob, or says why it cannot be used. */
export function compileGlob(pattern: string): GlobMatcher | { refused: string } {
  if (/^!(?!\()/.test(pattern))
    return { refused: "negated patterns (a leading !) are not supported; list what to match" };
  if (/(?<!\\)[@!+*?]\(/.test(pattern))
    return {
      refused:
        "extended globs like +(a|b) or !(x) are not supported; use braces {a,b} or several patterns",
    };
  const expanded = expandBraces(pattern.replace(/^(\.\/)+/, ""));
  if (typeof expanded === "string") return { refused: expanded };
  let lists: Segment[][];
  try {
    lists = expanded.map((p) => compileSegments(p));
  } catch (e) {
    return { refused: (e as Error).message };
  }
  const raw = pattern.replace(/^(\.\/)+/, "").split("/");
  const staticLead = raw.findIndex((s) => /[*?[{\\]/.test(s));
  const baseParts = raw.slice(
    0,
    staticLead < 0 ? raw.length - 1 : Math.min(staticLead, raw.length - 1),
  );
  const deep = lists.some((l) => l.some((s) => s.globstar));
  return {
    base: baseParts.join("/"),
    depth: deep ? Infinity : Math.max(...lists.map((l) => l.length)) - baseParts.length,
    dot: expanded.some((p) => p.split("/").some((s) => s.startsWith("."))),
    matches: (rel) => lists.some((l) => run(l, rel.split("/"), false)),
    mayHold: (rel) => rel === "" || lists.some((l) => run(l, rel.split("/"), true)),
  };
}

/**
 * Runs a segment list over path segments as a set of states. `partial`: whether the path can be
 * the start of a match (a folder worth entering).
 */
function run(list: Segment[], parts: string[], partial: boolean): boolean {
  let states = closure(list, new Set([0]));
  for (const part of parts) {
    const next = new Set<number>();
    for (const i of states) {
      const seg = list[i];
      if (!seg) continue;
      if (seg.globstar) {
        if (!part.startsWith(".")) next.add(i);
      } else if (seg.literal !== undefined ? seg.literal === part : seg.re.testExact(part))
        next.add(i + 1);
    }
    states = closure(list, next);
    if (states.size === 0) return false;
  }
  return partial ? [...states].some((i) => i < list.length) : states.has(list.length);
}

/** The states with every `**` that may match nothing skipped over. */
function closure(list: Segment[], states: Set<number>): Set<number> {
  for (const i of states) if (list[i]?.globstar) states.add(i + 1);
  return states;
}

/**
 * One brace-free glob as segments. A pattern that does not end in `*` also matches below the
 * folder it names (as the walk's `expandDirectories` did): a trailing `**` is added to it.
 */
function compileSegments(pattern: string): Segment[] {
  const parts = pattern.split("/");
  if (parts.at(-1) === "") parts.pop(); // `src/` names the folder
  const list: Segment[] = parts.map((p) =>
    p === "**" ? { globstar: true } : { globstar: false, ...segmentRe(p) },
  );
  if (!pattern.endsWith("*")) list.push({ globstar: true });
  return list;
}

type Token =
  | { kind: "lit"; ch: string }
  | { kind: "star" }
  | { kind: "any" }
  | { kind: "class"; re: string; noDot: string | undefined };

/** A name pattern (one segment) as an RE2 expression with the dot rule, or a plain literal. */
function segmentRe(seg: string): { re: RE2JS; literal?: string } {
  const tokens = tokenize(seg);
  if (tokens.every((t) => t.kind === "lit")) {
    const literal = tokens.map((t) => (t as { ch: string }).ch).join("");
    return { re: RE2JS.compile(RE2JS.quote(literal)), literal };
  }
  const plain = (from: number) => tokens.slice(from).map(plainRe).join("");
  // A name starting with a dot is matched only where the pattern writes the dot.
  const noDot = (i: number): string | undefined => {
    const t = tokens[i];
    if (!t) return "";
    if (t.kind === "lit") return t.ch === "." ? undefined : plainRe(t) + plain(i + 1);
    if (t.kind === "any") return `[^/.]${plain(i + 1)}`;
    if (t.kind === "class") return t.noDot === undefined ? undefined : t.noDot + plain(i + 1);
    const rest = noDot(i + 1);
    const some = `[^/.][^/]*${plain(i + 1)}`;
    return rest === undefined ? some : `(?:${some}|${rest})`;
  };
  const source = tokens[0]?.kind === "lit" && tokens[0].ch === "." ? plain(0) : noDot(0);
  return { re: RE2JS.compile(source === undefined ? "[^\\x{0}-\\x{10FFFF}]" : source) };
}

function plainRe(t: Token): string {
  if (t.kind === "lit") return RE2JS.quote(t.ch);
  if (t.kind === "star") return "[^/]*";
  if (t.kind === "any") return "[^/]";
  return t.re;
}

/** A segment's tokens: literals, `*` (runs of stars are one), `?`, classes. Throws when malformed. */
function tokenize(seg: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < seg.length; i++) {
    const ch = seg[i]!;
    if (ch === "\\" && i + 1 < seg.length) out.push({ kind: "lit", ch: seg[++i]! });
    else if (ch === "*") {
      if (out.at(-1)?.kind !== "star") out.push({ kind: "star" });
    } else if (ch === "?") out.push({ kind: "any" });
    else if (ch === "[") {
      const cls = readClass(seg, i);
      if (!cls) out.push({ kind: "lit", ch });
      else {
        out.push(cls.token);
        i = cls.end - 1;
      }
    } else out.push({ kind: "lit", ch });
  }
  return out;
}

/** A `[…]` class at `at` as RE2 (and the same without the dot), or undefined when not closed. */
function readClass(seg: string, at: number): { token: Token; end: number } | undefined {
  let i = at + 1;
  const negated = seg[i] === "!" || seg[i] === "^";
  if (negated) i++;
  const items: Array<[number, number] | string> = [];
  for (let first = true; i < seg.length; first = false) {
    const ch = seg[i]!;
    if (ch === "]" && !first) {
      const body = items.map(classItem).join("");
      if (negated)
        return { token: { kind: "class", re: `[^${body}/]`, noDot: `[^${body}/.]` }, end: i + 1 };
      // Without the dot: ranges that hold it are split around it.
      const DOT = 0x2e;
      const rest = items.flatMap((x): Array<[number, number] | string> =>
        typeof x === "string" || x[1] < DOT || x[0] > DOT
          ? [x]
          : (
              [
                [x[0], DOT - 1],
                [DOT + 1, x[1]],
              ] as Array<[number, number]>
            ).filter(([a, b]) => a <= b),
      );
      const noDot = rest.length ? `[${rest.map(classItem).join("")}]` : undefined;
      return { token: { kind: "class", re: `[${body}]`, noDot }, end: i + 1 };
    }
    const posix = /^\[:([a-z]+):\]/.exec(seg.slice(i, i + 12));
    if (posix) {
      items.push(posix[0]);
      i += posix[0].length;
      continue;
    }
    const lo = (ch === "\\" && i + 1 < seg.length ? seg[++i]! : ch).codePointAt(0)!;
    if (seg[i + 1] === "-" && seg[i + 2] !== undefined && seg[i + 2] !== "]") {
      items.push([lo, seg[i + 2]!.codePointAt(0)!]);
      i += 3;
    } else {
      items.push([lo, lo]);
      i++;
    }
  }
  return undefined;
}

const hex = (c: number) => `\\x{${c.toString(16)}}`;
const classItem = (x: [number, number] | string) =>
  typeof x === "string" ? x : x[0] === x[1] ? hex(x[0]) : `${hex(x[0])}-${hex(x[1])}`;

/**
 * The brace alternatives of a glob, expanded (`{a,b}`, nested, `{1..3}`, `{a..c}`); a string when
 * there would be more than `MAX_BRACE_ALTERNATIVES`.
 */
export function expandBraces(pattern: string): string[] | string {
  const open = findBrace(pattern);
  if (!open) return [pattern];
  const { start, end, parts } = open;
  const head = pattern.slice(0, start);
  const tail = pattern.slice(end + 1);
  const out: string[] = [];
  for (const part of parts) {
    const more = expandBraces(head + part + tail);
    if (typeof more === "string") return more;
    out.push(...more);
    if (out.length > MAX_BRACE_ALTERNATIVES)
      return `the braces expand to more than ${MAX_BRACE_ALTERNATIVES} patterns; use fewer alternatives`;
  }
  return [...new Set(out)];
}

/** The first brace group with alternatives (or a range): where it is and what it expands to. */
function findBrace(p: string): { start: number; end: number; parts: string[] } | undefined {
  for (let i = 0; i < p.length; i++) {
    if (p[i] === "\\") {
      i++;
      continue;
    }
    if (p[i] !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    for (let j = i; j < p.length; j++) {
      const ch = p[j];
      if (ch === "\\") j++;
      else if (ch === "{") depth++;
      else if (ch === "}" && --depth === 0) {
        const body = p.slice(i + 1, j);
        if (commas.length) {
          const cuts = [i, ...commas, j];
          return {
            start: i,
            end: j,
            parts: cuts.slice(1).map((c, k) => p.slice(cuts[k]! + 1, c)),
          };
        }
        const range = rangeOf(body);
        if (range) return { start: i, end: j, parts: range };
        break; // `{x}`: a literal brace pair, as the walk read it
      } else if (ch === "," && depth === 1) commas.push(j);
    }
  }
  return undefined;
}

/** `1..5`, `a..e` (and a step `1..9..2`) as its values; undefined for anything else or too many. */
function rangeOf(body: string): string[] | undefined {
  const m = /^(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(?:\.\.(\d+))?$/.exec(body);
  if (!m) return undefined;
  const numeric = /\d/.test(m[1]!);
  if (numeric !== /\d/.test(m[2]!)) return undefined;
  const a = numeric ? Number(m[1]) : m[1]!.charCodeAt(0);
  const b = numeric ? Number(m[2]) : m[2]!.charCodeAt(0);
  const step = Math.max(1, Number(m[3] ?? 1));
  if (Math.abs(b - a) / step > MAX_BRACE_ALTERNATIVES) return undefined;
  const out: string[] = [];
  for (let v = a; a <= b ? v <= b : v >= b; v += a <= b ? step : -step)
    out.push(numeric ? String(v) : String.fromCharCode(v));
  return out;
}
