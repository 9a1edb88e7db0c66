/**
 * The bookkeeping of a reply's spans, each question answered in logarithmic time so that reading
 * stays linear in the reply: which spans are already claimed (`Claims`), and which spans are markup
 * quoted as code (`CodeQuotes`: an inline code span, or a fenced block with prose after it).
 */
import { END_OF_TURN } from "./end-of-turn.js";
import { charge } from "./meter.js";
import type { Extraction } from "./types.js";

/** Disjoint spans of a text of length `n`: does a new one overlap any? (Fenwick tree of starts.) */
export class Claims {
  private readonly tree: Int32Array;
  private readonly ends = new Map<number, number>();
  private readonly top: number;
  constructor(private readonly n: number) {
    this.tree = new Int32Array(n + 2);
    this.top = 1 << Math.floor(Math.log2(n + 1));
  }
  /** Whether [start, end) overlaps a claimed span. */
  overlaps(start: number, end: number): boolean {
    charge(1);
    if (this.count(end) - this.count(start) > 0) return true; // a claimed span starts inside
    const before = this.count(start);
    if (before === 0) return false;
    const at = this.kth(before); // the last claimed start before `start`
    return this.ends.get(at)! > start;
  }
  /** Claims [start, end) (which overlaps no claimed span). */
  claim(start: number, end: number): void {
    this.ends.set(start, end);
    for (let i = start + 1; i <= this.n + 1; i += i & -i) this.tree[i]!++;
  }
  /** Claimed starts below `pos`. */
  private count(pos: number): number {
    let s = 0;
    for (let i = Math.min(pos, this.n + 1); i > 0; i -= i & -i) s += this.tree[i]!;
    return s;
  }
  /** The k-th claimed start (1-based). */
  private kth(k: number): number {
    let pos = 0;
    for (let step = this.top; step > 0; step >>= 1) {
      const next = pos + step;
      if (next <= this.n + 1 && this.tree[next]! < k) {
        pos = next;
        k -= this.tree[next]!;
      }
    }
    return pos; // tree index pos + 1 holds the start `pos`
  }
}

/** A Markdown fence line (its info string in group 1). */
export const FENCE_LINE = /^[ \t]*```([\w-]*)[^\n]*$/gm;
const BARE_FENCE = /^[ \t]*```[ \t]*$/;

/** The largest index in sorted `xs` whose value is < `v` (-1: none). */
function below(xs: readonly number[], v: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * Which kept spans of a reply are call markup quoted as code, an example rather than an action:
 * inside an inline code span (backticks around it on its line), or inside a fenced block with prose
 * after the block (not a Gemma 3 `tool_code` block, its own format). The other spans' text (a
 * file's fences in a value) is not the reply's Markdown. Everything is read once, up front.
 */
export class CodeQuotes {
  /** Single backticks (not of a ``` run) before each position, for the spans' own lines. */
  private readonly ticks: Int32Array;
  private readonly lineStarts: number[] = [0];
  /** Fence lines outside the spans: where each starts, its info string, and bare ones' ends. */
  private readonly fences: Array<{ at: number; info: string }> = [];
  private readonly fenceStarts: number[] = [];
  private readonly bareEnds: number[] = [];
  private readonly bareStarts: number[] = [];
  /** From here on, what is outside the spans and fences is only whitespace and end-of-turn tokens. */
  private readonly tail: number;

  constructor(
    private readonly text: string,
    spans: readonly Extraction[],
  ) {
    charge(4 * text.length);
    this.ticks = new Int32Array(text.length + 1);
    for (let i = 0; i < text.length; i++) {
      const run = text.startsWith("```", i);
      this.ticks[i + 1] = this.ticks[i]! + (text[i] === "`" && !run ? 1 : 0);
      if (run) {
        this.ticks[i + 2] = this.ticks[i + 1] = this.ticks[i + 3] = this.ticks[i]!;
        i += 2;
      }
      if (text[i] === "\n") this.lineStarts.push(i + 1);
    }
    let k = 0;
    for (const m of text.matchAll(FENCE_LINE)) {
      while (k < spans.length && spans[k]!.end <= m.index) k++;
      const inside = k < spans.length && spans[k]!.start <= m.index && m.index < spans[k]!.end;
      if (!inside) {
        this.fences.push({ at: m.index, info: m[1]! });
        this.fenceStarts.push(m.index);
      }
      if (BARE_FENCE.test(m[0])) {
        this.bareStarts.push(m.index);
        this.bareEnds.push(m.index + m[0].length);
      }
    }
    this.tail = lastMeaningful(text, spans, this.fences);
  }

  /** Whether span `e` (one of the spans given) is quoted as code. */
  quoted(e: Extraction): boolean {
    const { text } = this;
    const line = this.lineStarts[below(this.lineStarts, e.start + 1)]!;
    const next = this.lineStarts[below(this.lineStarts, e.end + 1) + 1];
    const lineEnd = next === undefined ? text.length : next - 1;
    const ticks = (a: number, b: number) => this.ticks[b]! - this.ticks[a]!;
    if (ticks(line, e.start) % 2 === 1 && ticks(e.end, Math.max(e.end, lineEnd)) > 0) return true;
    const before = below(this.fenceStarts, e.start);
    const own = text.startsWith("```", e.start);
    if (!own && (before + 1) % 2 === 0) return false;
    const info = own
      ? /^```([\w-]*)/.exec(text.slice(e.start, e.start + 40))?.[1]
      : this.fences[before]?.info;
    if (info === "tool_code") return false;
    const body = text.slice(e.start, e.end).trimEnd();
    let close = own && body.length > 3 && body.endsWith("```") ? e.end : -1;
    // a fence closing right after the span, on its line
    const right = /^[ \t]*```[ \t]*(?=\n|$)/.exec(text.slice(e.end, e.end + 80));
    if (close < 0 && right) close = e.end + right[0].length;
    if (close < 0) {
      const i = below(this.bareStarts, e.end) + 1;
      if (i >= this.bareStarts.length) return false; // a reply cut inside its fence
      close = this.bareEnds[i]!;
    }
    return close < this.tail;
  }
}

/**
 * The end of the last character outside `spans` and fence lines that is not whitespace or an
 * end-of-turn token: after it a reply has no prose.
 */
function lastMeaningful(
  text: string,
  spans: readonly Extraction[],
  fences: ReadonlyArray<{ at: number }>,
): number {
  const cuts = spans.map((s) => [s.start, s.end] as const);
  let end = text.length;
  let f = fences.length - 1;
  for (let k = cuts.length; k >= 0; k--) {
    const from = k === 0 ? 0 : cuts[k - 1]![1];
    let at = Math.max(from, end);
    // Walk back over whitespace, end-of-turn tokens and fence lines.
    for (;;) {
      while (at > from && /\s/.test(text[at - 1]!)) at--;
      const token = END_OF_TURN.find(
        (t) => at - t.length >= from && text.startsWith(t, at - t.length),
      );
      if (token) {
        at -= token.length;
        continue;
      }
      while (f >= 0 && fences[f]!.at >= at) f--;
      const fence = f >= 0 ? fences[f]! : undefined;
      const eol = fence ? text.indexOf("\n", fence.at) : -1;
      if (fence && fence.at >= from && (eol < 0 ? text.length : eol) >= at) {
        at = fence.at;
        f--;
        continue;
      }
      break;
    }
    if (at > from) return at;
    end = k === 0 ? 0 : cuts[k - 1]![0];
  }
  return 0;
}
