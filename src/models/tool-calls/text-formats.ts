/**
 * Formats whose arguments are written as text or Python: GLM-4.5 XML, Gemma's `call:name{…}` and
 * tool_code blocks, pythonic lists (Llama 3.2/4) and LFM2. (Qwen3-Coder's XML: qwen-formats.ts.)
 */
import { charge, scanAll } from "./meter.js";
import { find, lenientJson, parsePythonCalls, parsePythonLines, XML_NAME } from "./scan.js";
import { endOfTurnAt, onlyEndOfTurn } from "./end-of-turn.js";
import type { Extraction, Extractor, RawCall } from "./types.js";

/** The extraction for a whole regex match: its calls, or the problem when there are none. */
function spanOf(
  m: RegExpMatchArray & { index: number },
  calls: RawCall[] | undefined,
  problem: string,
): Extraction {
  const end = m.index + m[0].length;
  return calls ? { start: m.index, end, calls } : { start: m.index, end, calls: [], problem };
}

/**
 * A GLM key and value. A key or value runs up to the next GLM tag, never over it: a key left open
 * is not read on to the end of the text by every key after it (each match is linear).
 */
const GLM_TEXT = String.raw`((?:[^<]|<(?!\/?arg_(?:key|value)>))*)`;
const GLM_PAIR = String.raw`<arg_key>${GLM_TEXT}<\/arg_key>\s*<arg_value>${GLM_TEXT}<\/arg_value>`;
const GLM_PAIRS = new RegExp(GLM_PAIR, "g");
const GLM_FRAMELESS = new RegExp(
  String.raw`(?<=^|\n)[ \t]*([\p{L}_][\p{L}\p{N}_.-]*)[ \t]*\n?[ \t]*((?:${GLM_PAIR.replace(/\((?!\?)/g, "(?:")}\s*)+)`,
  "gu",
);

export const glmFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  const read = (m: RegExpMatchArray & { index: number }, name: string, body: string) => {
    const args: Record<string, unknown> = {};
    charge(body.length);
    const pairs = [...body.matchAll(GLM_PAIRS)];
    // Read strictly: one-word names, only key-value pairs, each key once.
    let wrong = XML_NAME.test(name) ? undefined : `${JSON.stringify(name)} is not a tool name`;
    for (const p of pairs) {
      const key = p[1]!.trim();
      if (key in args) wrong ??= `the argument ${key} is given twice`;
      args[key] = p[2]!;
    }
    const keys = (body.match(/<arg_key>/g) ?? []).length;
    if (keys !== pairs.length)
      wrong ??= "each <arg_key>k</arg_key> must be followed by <arg_value>v</arg_value>";
    else if (body.replace(GLM_PAIRS, "").trim()) wrong ??= "text stands between the arguments";
    const end = m.index + m[0].length;
    out.push(
      wrong
        ? { start: m.index, end, calls: [], problem: wrong }
        : { start: m.index, end, calls: [{ name, arguments: args, textValues: "json" }] },
    );
  };
  for (const m of scanAll(
    /<tool_call>\s*([^\s<{[]+)\s*((?:<arg_key>[\s\S]*?)?)(<\/tool_call>|$)/gu,
    text,
  )) {
    if (m[3] === "</tool_call>") read(m, m[1]!, m[2]!);
    // Arguments that run to the end of the text: the reply was cut inside the call.
    else if (/<arg_key>/.test(m[2]!))
      out.push({
        start: m.index,
        end: m.index + m[0].length,
        calls: [],
        problem: `the call to ${m[1]} was cut before </tool_call>`,
      });
  }
  // The call without its <tool_call> frame (servers that strip the special tokens): not where the
  // frame is written, around something else (text between the name and its arguments).
  if (out.length || text.includes("<tool_call>")) return out;
  for (const m of scanAll(GLM_FRAMELESS, text)) read(m, m[1]!, m[2]!);
  return out;
};

/** The string delimiters Gemma writes: Gemma 4's `<|"|>`, FunctionGemma's `<escape>`. */
const GEMMA_QUOTES = ['<|"|>', "<escape>"];

/**
 * Reads Gemma values from `s` up to `limit`: a delimited string, a bare-key object `{k:v,…}`, a
 * list `[…]`, a JSON string, a number or literal, or bare text up to the next `,` `}` `]`. Throws
 * when malformed, or when a value runs past `limit` (`past`: then it may be whole further on).
 */
class GemmaReader {
  /** A value ran past the limit. */
  past = false;
  /** The furthest point read. */
  reach = 0;
  constructor(
    private readonly s: string,
    private readonly limit: number,
  ) {}
  private at(i: number): string | undefined {
    if (i >= this.limit) {
      this.past = this.limit < this.s.length;
      return undefined;
    }
    this.reach = Math.max(this.reach, i);
    return this.s[i];
  }
  private skip(i: number, chars: RegExp): number {
    const from = i;
    while (chars.test(this.at(i) ?? "")) i++;
    charge(i - from + 1);
    return i;
  }
  /** The text of `re` matched at `i`, within the limit (and `max` characters). */
  private match(re: RegExp, i: number, max = Infinity): RegExpExecArray | null {
    const end = Math.min(this.limit, i + max);
    const m = re.exec(this.s.slice(i, end));
    charge((m?.[0].length ?? end - i) + 1);
    if (!m && end === this.limit) this.past = this.limit < this.s.length;
    if (m) this.reach = Math.max(this.reach, i + m[0].length);
    return m;
  }
  value(from: number): { value: unknown; end: number } {
    const { s } = this;
    let i = this.skip(from, /\s/);
    const quote = GEMMA_QUOTES.find((q) => s.startsWith(q, i));
    if (quote) {
      const close = find(s, quote, i + quote.length);
      if (close < 0 || close + quote.length > this.limit) {
        this.past = close >= 0;
        throw new Error("unterminated string");
      }
      this.reach = Math.max(this.reach, close);
      return { value: s.slice(i + quote.length, close), end: close + quote.length };
    }
    if (this.at(i) === "{") {
      const out: Record<string, unknown> = {};
      for (i++; ;) {
        i = this.skip(i, /[\s,]/);
        if (this.at(i) === "}") return { value: out, end: i + 1 };
        let key: string;
        if (GEMMA_QUOTES.some((x) => s.startsWith(x, i))) {
          const k = this.value(i);
          key = String(k.value);
          i = k.end;
        } else {
          const m = this.match(/^"?([^":{}[\],]+?)"?\s*(?=:)/u, i);
          if (!m) throw new Error("expected a key");
          key = m[1]!.trim();
          i += m[0].length;
        }
        i = this.skip(i, /\s/);
        if (this.at(i) !== ":") throw new Error("expected :");
        const v = this.value(i + 1);
        out[key] = v.value;
        i = v.end;
      }
    }
    if (this.at(i) === "[") {
      const out: unknown[] = [];
      for (i++; ;) {
        i = this.skip(i, /[\s,]/);
        if (this.at(i) === "]") return { value: out, end: i + 1 };
        if (i >= Math.min(s.length, this.limit)) throw new Error("unterminated list");
        const v = this.value(i);
        out.push(v.value);
        i = v.end;
      }
    }
    if (this.at(i) === '"') {
      const m = this.match(/^"((?:[^"\\]|\\.)*)"/, i);
      if (!m) throw new Error("unterminated string");
      return { value: lenientJson(m[0]), end: i + m[0].length };
    }
    // Bare text ends at a `,` `}` `]` or the line's end, and is at most 1,024 characters.
    const m = this.match(/^[^,}\]\n]{0,1024}/, i, 1025)!;
    const raw = m[0].trim();
    if (!raw) throw new Error("expected a value");
    const parsed = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)$/.test(raw)
      ? (JSON.parse(raw) as unknown)
      : raw;
    return { value: parsed, end: i + m[0].length };
  }
}

/**
 * Reads Gemma's `{key:<|"|>text<|"|>,n:5,…}` argument block at `at`, up to `limit`; undefined if
 * malformed. `past`: it ran past `limit`; `reach`: the furthest point read.
 */
function gemmaArgs(
  text: string,
  at: number,
  limit = text.length,
): { args?: Record<string, unknown>; end: number; past: boolean; reach: number } {
  const r = new GemmaReader(text, limit);
  try {
    const v = r.value(at);
    return v.value && typeof v.value === "object" && !Array.isArray(v.value)
      ? { args: v.value as Record<string, unknown>, end: v.end, past: false, reach: r.reach }
      : { end: v.end, past: false, reach: r.reach };
  } catch {
    return { end: at, past: r.past, reach: r.reach };
  }
}

/**
 * Gemma: Gemma 4's `<|tool_call>call:name{…}<tool_call|>`, FunctionGemma's
 * `<start_function_call>call:name{…}<end_function_call>`, bare `call:name{…}`, and ```tool_code
 * blocks.
 */
export const gemmaFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  const openers = [
    ...scanAll(
      /(<start_function_call>\s*|<\|tool_call>\s*)?(?:^|(?<=\s|>))call:([\p{L}\p{N}_.-]+)\s*(?=\{)/gmu,
      text,
    ),
  ];
  let after = 0;
  // Each call is read up to the next one; only a value that runs on (a string holding another
  // call's text) is read further, and never again over what such a read already failed on.
  let failedUpTo = 0;
  for (const [k, m] of openers.entries()) {
    if (m.index < after) continue; // inside the arguments of the call before
    const at = m.index + m[0].length;
    let parsed = gemmaArgs(text, at, openers[k + 1]?.index ?? text.length);
    if (!parsed.args && parsed.past && at >= failedUpTo) {
      parsed = gemmaArgs(text, at);
      if (!parsed.args) failedUpTo = parsed.reach;
    }
    if (!parsed.args) {
      out.push({
        start: m.index,
        end: at,
        calls: [],
        problem: `call:${m[2]} must be followed by {key:<escape>value<escape>, …}`,
      });
      continue;
    }
    let end = parsed.end;
    after = end;
    const close = /^\s*(<end_function_call>|<tool_call\|>)/.exec(text.slice(end, end + 200));
    if (close) end += close[0].length;
    out.push({
      start: m.index,
      end,
      calls: [{ name: m[2]!, arguments: parsed.args, textValues: true }],
    });
  }
  for (const m of scanAll(/```tool_code\s*\n([\s\S]*?)```/g, text)) {
    const code = m[1]!.trim().replace(/^print\(([\s\S]*)\)$/, "$1");
    // One call, a list, or one call per line (Gemma 3 writes the block as Python).
    const calls = parsePythonCalls(code) ?? parsePythonLines(code);
    out.push(spanOf(m, calls, 'a tool_code block must hold calls like get_weather(city="Paris")'));
  }
  return out;
};

/**
 * Pythonic lists (Llama 3.2, Llama 4): the reply is `[f(a=1), g(b="x")]`, on its own lines or
 * between `<|python_start|>` and `<|python_end|>`.
 */
export const pythonicFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of scanAll(/<\|python_start\|>([\s\S]*?)(<\|python_end\|>|$)/g, text)) {
    const calls = parsePythonCalls(m[1]!);
    out.push(spanOf(m, calls, '<|python_start|> must hold calls like [get_weather(city="Paris")]'));
  }
  if (out.length) return out;
  // The list on one line or spread over several, one call a line (end-of-turn tokens may follow);
  // a list never runs over a line that opens another (an unclosed one is not read to the end of
  // the text by every list after it).
  for (const m of scanAll(
    /^[ \t]*(\[\s*[A-Za-z_][\w.-]*\((?:(?!\n[ \t]*\[\s*[A-Za-z_][\w.-]*\()[\s\S])*?\)\s*\])[ \t]*(?=$|<\||<｜|<\/s>|<end_of_turn>|<turn\|>)/gm,
    text,
  )) {
    const end = m.index + m[0].length;
    const eol = text.indexOf("\n", end);
    if (!onlyEndOfTurn(text, end, eol < 0 ? text.length : eol)) continue;
    const calls = parsePythonCalls(m[1]!);
    if (calls) out.push({ start: m.index, end: end + endOfTurnAt(text, end), calls });
  }
  return out;
};

/** LFM2: `<|tool_call_start|>[f(a=1)]<|tool_call_end|>` (pythonic, or a JSON list). */
export const lfm2Format: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of scanAll(/<\|tool_call_start\|>([\s\S]*?)(<\|tool_call_end\|>|$)/g, text)) {
    const body = m[1]!.trim();
    let calls: RawCall[] | undefined = parsePythonCalls(body);
    if (!calls) {
      const json = lenientJson(body);
      const list = Array.isArray(json) ? json : json ? [json] : [];
      const mapped = list.map((o) => {
        const r = o as Record<string, unknown>;
        return typeof r?.name === "string" && r.arguments && typeof r.arguments === "object"
          ? { name: r.name, arguments: r.arguments }
          : undefined;
      });
      calls = mapped.length && mapped.every(Boolean) ? (mapped as RawCall[]) : undefined;
    }
    out.push(
      spanOf(m, calls, '<|tool_call_start|> must hold calls like [get_weather(city="Paris")]'),
    );
  }
  return out;
};
