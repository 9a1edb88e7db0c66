/**
 * Low-level readers for tool-call text: balanced JSON spans, lenient JSON, and Python-style call
 * expressions (`[f(a=1, b="x")]`). All return `undefined` on bad input; none throws. Each charges
 * the characters it reads to the parse's meter (meter.ts).
 */
import { charge } from "./meter.js";
import { forgetSearches, memoOf } from "./find.js";

export { find, findRe } from "./find.js";

/**
 * Where the brackets of the reply being read close (-1: never, or wrongly), as far as a scan has
 * seen them outside a string: a scan that passed a bracket outside a string read exactly what a
 * scan starting there would, so none is scanned twice. Forgotten at the start of each reply.
 */
const closes = new Map<string, Map<number, number>>();

/** End index (exclusive) of the balanced JSON object/array starting at `start`, or -1. */
export function balancedEnd(text: string, start: number): number {
  const open = text[start];
  if (open !== "{" && open !== "[") return -1;
  const known = memoOf(closes, text, () => new Map<number, number>());
  const seen = known.get(start);
  if (seen !== undefined) return seen;
  const stack: number[] = [];
  const fail = () => {
    for (const at of stack) known.set(at, -1);
    return -1;
  };
  let inString: string | null = null;
  let i = start;
  let steps = 1;
  for (; i < text.length; i++, steps++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === inString) inString = null;
      continue;
    }
    if (ch === '"') inString = ch;
    else if (ch === "{" || ch === "[") {
      const end = i === start ? undefined : known.get(i);
      if (end === -1) break;
      if (end !== undefined)
        i = end - 1; // a value already read: skip it
      else stack.push(i);
    } else if (ch === "}" || ch === "]") {
      const at = stack.pop();
      if (at === undefined || text[at] !== (ch === "}" ? "{" : "[")) {
        if (at !== undefined) stack.push(at);
        charge(steps);
        return fail();
      }
      known.set(at, i + 1);
      if (stack.length === 0) {
        charge(steps);
        return i + 1;
      }
    }
  }
  charge(steps);
  return fail();
}

/**
 * Parses JSON the way small models write it: strict first, then with trailing commas removed and
 * Python literals (True/False/None) replaced outside strings.
 */
export function lenientJson(text: string): unknown {
  charge(2 * text.length + 1);
  const t = text.trim();
  try {
    return JSON.parse(t);
  } catch {
    // fall through to the repairs
  }
  let out = "";
  let inString = false;
  for (let i = 0; i < t.length; i++) {
    const ch = t[i]!;
    if (inString) {
      if (ch === "\\") {
        const next = t[i + 1] ?? "";
        // A backslash that starts no JSON escape (a Windows path) is a literal backslash.
        out += /["\\/bfnrtu]/.test(next) ? ch + next : "\\\\" + next;
        i++;
      } else if (ch === "\n") out += "\\n";
      else {
        out += ch;
        if (ch === '"') inString = false;
      }
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
      continue;
    }
    const word = /^(True|False|None)\b/.exec(t.slice(i));
    if (word) {
      out += word[1] === "True" ? "true" : word[1] === "False" ? "false" : "null";
      i += word[1]!.length - 1;
      continue;
    }
    out += ch;
  }
  out = out.replace(/,\s*([}\]])/g, "$1");
  if (out !== t)
    try {
      return JSON.parse(out);
    } catch {
      // not repaired: maybe Python
    }
  // Python's literals differ from JSON in their quotes (True/False/None were replaced above).
  return t.includes("'") ? pythonLiteral(t) : undefined;
}

/** A Python literal (`{'a': 1, 'b': [True, None]}`: single quotes, as some models write JSON). */
function pythonLiteral(text: string): unknown {
  if (!/^[{[]/.test(text)) return undefined;
  const p = new PyReader(text);
  try {
    const v = p.value();
    p.ws();
    return p.done() ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where in the texts of the reply being read (the reply, its bodies) no JSON value parses: several
 * readers look at the same offsets, and a failed parse is the dear part. Deterministic, so
 * remembering it changes no result; `parseToolCalls` forgets it at the start of each reply.
 */
const failed = new Map<string, Set<number>>();
const FAILED_TEXTS = 4;

/** Starts a new reply: what was learnt reading the last one is forgotten. */
export function forgetFailures(): void {
  failed.clear();
  closes.clear();
  forgetSearches();
}

/** The first balanced JSON value at or after `from` (skipping whitespace only), parsed. */
export function jsonAt(text: string, from: number): { value: unknown; end: number } | undefined {
  let i = from;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  charge(i - from + 1);
  const end = balancedEnd(text, i);
  if (end < 0) return undefined;
  let known = failed.get(text);
  if (known?.has(i)) return undefined;
  const value = lenientJson(text.slice(i, end));
  if (value !== undefined) return { value, end };
  if (!known) {
    if (failed.size >= FAILED_TEXTS) failed.delete(failed.keys().next().value!);
    failed.set(text, (known = new Set()));
  }
  known.add(i);
  return undefined;
}

export interface PyCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * Parses a Python-style list of calls, `[f(a=1), g(b="x", c=[1, 2])]`, or a bare call `f(a=1)`.
 * Keyword arguments only (that is what the pythonic tool formats produce). Returns undefined unless
 * the whole input is consumed.
 */
export function parsePythonCalls(text: string): PyCall[] | undefined {
  const p = new PyReader(text.trim());
  try {
    const calls: PyCall[] = [];
    const bracketed = p.peek() === "[";
    if (bracketed) p.expect("[");
    for (;;) {
      p.ws();
      if (bracketed && p.peek() === "]") break;
      calls.push(p.call());
      p.ws();
      if (p.peek() === ",") {
        p.expect(",");
        continue;
      }
      break;
    }
    if (bracketed) p.expect("]");
    p.ws();
    return p.done() && calls.length > 0 ? calls : undefined;
  } catch {
    return undefined;
  }
}

const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "0": "\0",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "\n": "",
};

/**
 * Parses calls one per line or separated by commas, without brackets (`f(a=1)\ng(b=2)`, as OLMo 3
 * writes them). Undefined unless every line is a call.
 */
export function parsePythonLines(text: string): PyCall[] | undefined {
  const p = new PyReader(text.trim());
  try {
    const calls: PyCall[] = [];
    for (;;) {
      p.ws();
      if (p.done()) break;
      calls.push(p.call());
      p.ws();
      if (p.peek() === "," || p.peek() === ";") p.expect(p.peek()!);
    }
    return calls.length > 0 ? calls : undefined;
  } catch {
    return undefined;
  }
}

class PyReader {
  private i = 0;
  constructor(private readonly s: string) {
    charge(s.length + 1);
  }
  peek() {
    return this.s[this.i];
  }
  done() {
    return this.i >= this.s.length;
  }
  ws() {
    while (this.i < this.s.length && /\s/.test(this.s[this.i]!)) this.i++;
  }
  expect(ch: string) {
    this.ws();
    if (this.s[this.i] !== ch) throw new Error(`expected ${ch}`);
    this.i++;
  }
  ident(): string {
    this.ws();
    const m = /^[\p{L}_][\p{L}\p{N}_.-]*/u.exec(this.s.slice(this.i));
    if (!m) throw new Error("expected a name");
    this.i += m[0].length;
    return m[0];
  }
  call(): PyCall {
    const name = this.ident();
    this.expect("(");
    const args: Record<string, unknown> = {};
    this.ws();
    while (this.peek() !== ")") {
      const key = this.ident();
      this.ws();
      if (this.peek() !== "=" && this.peek() !== ":") throw new Error("expected =");
      this.i++;
      args[key] = this.value();
      this.ws();
      if (this.peek() === ",") this.i++;
      this.ws();
    }
    this.expect(")");
    return { name, arguments: args };
  }
  value(): unknown {
    this.ws();
    const ch = this.peek();
    if (ch === '"' || ch === "'") return this.str();
    if (ch === "[" || ch === "(") {
      const close = ch === "[" ? "]" : ")";
      this.i++;
      const out: unknown[] = [];
      this.ws();
      while (this.peek() !== close) {
        out.push(this.value());
        this.ws();
        if (this.peek() === ",") this.i++;
        this.ws();
      }
      this.i++;
      return out;
    }
    if (ch === "{") {
      this.i++;
      const out: Record<string, unknown> = {};
      this.ws();
      while (this.peek() !== "}") {
        const k = this.value();
        this.expect(":");
        out[String(k)] = this.value();
        this.ws();
        if (this.peek() === ",") this.i++;
        this.ws();
      }
      this.i++;
      return out;
    }
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|True|False|None|true|false|null)/.exec(
      this.s.slice(this.i),
    );
    if (!m) throw new Error("expected a value");
    this.i += m[0].length;
    const lit: Record<string, unknown> = {
      True: true,
      False: false,
      None: null,
      true: true,
      false: false,
      null: null,
    };
    return m[0] in lit ? lit[m[0]] : Number(m[0]);
  }
  str(): string {
    const q = this.s[this.i++]!;
    const triple = this.s.slice(this.i, this.i + 2) === q + q;
    if (triple) this.i += 2;
    let out = "";
    while (this.i < this.s.length) {
      const ch = this.s[this.i]!;
      if (ch === "\\") {
        const n = this.s[this.i + 1]!;
        // `\u00e9`, `\x41`, `\U0001F600`: a code point.
        const hex = { u: 4, x: 2, U: 8 }[n];
        const code = hex ? /^[0-9a-fA-F]+$/.exec(this.s.slice(this.i + 2, this.i + 2 + hex)) : null;
        if (hex && code?.[0].length === hex) {
          out += String.fromCodePoint(parseInt(code[0], 16));
          this.i += 2 + hex;
          continue;
        }
        // Python keeps the backslash of an escape it does not know (`C:\Users`).
        out += ESCAPES[n] ?? `\\${n}`;
        this.i += 2;
        continue;
      }
      if (triple ? this.s.slice(this.i, this.i + 3) === q.repeat(3) : ch === q) {
        this.i += triple ? 3 : 1;
        return out;
      }
      out += ch;
      this.i++;
    }
    throw new Error("unterminated string");
  }
}

/** A tool or parameter name as the XML-style templates write it: one word, no spaces. */
export const XML_NAME = /^[\p{L}\p{N}_.:$-]+$/u;

/** Whether the markup at `at` sits inside a line of prose (words before it), not where calls start. */
export function inline(text: string, at: number): boolean {
  const before = text.slice(Math.max(0, at - 200), at);
  charge(before.length);
  return /\w/.test(before.slice(before.lastIndexOf("\n") + 1));
}
