/**
 * Formats whose arguments are written as text or Python: Qwen3-Coder and GLM-4.5 XML, Gemma's
 * `call:name{…}` and tool_code blocks, pythonic lists (Llama 3.2/4) and LFM2.
 */
import { inline, lenientJson, parsePythonCalls, parsePythonLines } from "./scan.js";
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

/** Drops the single newline templates put around XML values. */
const xmlValue = (v: string) => v.replace(/^\r?\n/, "").replace(/\r?\n$/, "");

/**
 * The parameters of a Qwen3-Coder function body, read strictly: nothing but whitespace and
 * `<parameter=name>value</parameter>` elements. Undefined when anything else is there (an unclosed
 * parameter, one whose value runs into the next parameter's tag, stray text, JSON): a broken call
 * is text, never half a call or a call with one value swallowing another.
 */
function xmlParameters(body: string): Record<string, unknown> | undefined {
  const args: Record<string, unknown> = {};
  let i = 0;
  for (;;) {
    while (i < body.length && /\s/.test(body[i]!)) i++;
    if (i >= body.length) return args;
    const open = /^<parameter=([^>\s][^>\n]*)>/.exec(body.slice(i, i + 200));
    if (!open) return undefined;
    const from = i + open[0].length;
    const close = body.indexOf("</parameter>", from);
    if (close < 0 || /\n[ \t]*<parameter=[^>\s][^>\n]*>/.test(body.slice(from, close)))
      return undefined;
    args[open[1]!.trim()] = xmlValue(body.slice(from, close));
    i = close + "</parameter>".length;
  }
}

/**
 * Qwen3-Coder and Qwen3.5: `<tool_call><function=name><parameter=k>v</parameter></function></tool_call>`
 * (Seed-OSS wraps the same in `<seed:tool_call>`). The function must be closed and hold only
 * parameter elements; anything else is described in `problem` and stays text.
 */
export const qwen3CoderFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  const re =
    /(?:<(?:seed:)?tool_call>\s*)?<function=([^>\n]+)>(?!\s*\{)([\s\S]*?)(?:<\/function>\s*(?:<\/(?:seed:)?tool_call>)?|$)/gu;
  for (const m of text.matchAll(re)) {
    const name = m[1]!.trim();
    const closed = /<\/function>/.test(m[0]);
    // An unclosed tag inside a sentence ("Qwen3-Coder writes `<function=name>` …"): a mention.
    if (!closed && inline(text, m.index) && !/^\s*<parameter=/.test(m[2]!)) continue;
    const args = closed && !/\s/.test(name) ? xmlParameters(m[2]!) : undefined;
    out.push(
      args
        ? {
            start: m.index,
            end: m.index + m[0].length,
            calls: [{ name, arguments: args, textValues: true }],
          }
        : {
            start: m.index,
            end: m.index + m[0].length,
            calls: [],
            problem: `<function=${name}> must contain only <parameter=name>value</parameter> elements and end with </function>`,
          },
    );
  }
  return out;
};

/**
 * GLM-4.5 and later: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`. A
 * value is JSON text unless the tool's schema says the parameter is a string (the GLM templates
 * write non-string arguments with `tojson`), so arrays and objects come back as such.
 */
export const glmFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  const read = (m: RegExpMatchArray & { index: number }, name: string, body: string) => {
    const args: Record<string, unknown> = {};
    const pairs = [
      ...body.matchAll(/<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)<\/arg_value>/g),
    ];
    for (const p of pairs) args[p[1]!.trim()] = p[2]!;
    const keys = (body.match(/<arg_key>/g) ?? []).length;
    const end = m.index + m[0].length;
    out.push(
      keys !== pairs.length
        ? {
            start: m.index,
            end,
            calls: [],
            problem: "each <arg_key>k</arg_key> must be followed by <arg_value>v</arg_value>",
          }
        : { start: m.index, end, calls: [{ name, arguments: args, textValues: "json" }] },
    );
  };
  for (const m of text.matchAll(
    /<tool_call>\s*([^\s<{[]+)\s*((?:<arg_key>[\s\S]*?)?)(<\/tool_call>|$)/gu,
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
  if (out.length) return out;
  // The call without its <tool_call> frame (servers that strip the special tokens).
  for (const m of text.matchAll(
    /(?<=^|\n)[ \t]*([\p{L}_][\p{L}\p{N}_.-]*)[ \t]*\n?[ \t]*((?:<arg_key>[\s\S]*?<\/arg_key>\s*<arg_value>[\s\S]*?<\/arg_value>\s*)+)/gu,
  ))
    read(m, m[1]!, m[2]!);
  return out;
};

/** The string delimiters Gemma writes: Gemma 4's `<|"|>`, FunctionGemma's `<escape>`. */
const GEMMA_QUOTES = ['<|"|>', "<escape>"];

/**
 * Reads one Gemma value at `i`: a delimited string, a bare-key object `{k:v,…}`, a list `[…]`, a
 * JSON string, a number or literal, or bare text up to the next `,` `}` `]`. Throws when malformed.
 */
function gemmaValue(s: string, at: number): { value: unknown; end: number } {
  let i = at;
  while (/\s/.test(s[i] ?? "")) i++;
  const quote = GEMMA_QUOTES.find((q) => s.startsWith(q, i));
  if (quote) {
    const close = s.indexOf(quote, i + quote.length);
    if (close < 0) throw new Error("unterminated string");
    return { value: s.slice(i + quote.length, close), end: close + quote.length };
  }
  if (s[i] === "{") {
    const out: Record<string, unknown> = {};
    i++;
    for (;;) {
      while (/[\s,]/.test(s[i] ?? "")) i++;
      if (s[i] === "}") return { value: out, end: i + 1 };
      const q = GEMMA_QUOTES.find((x) => s.startsWith(x, i));
      let key: string;
      if (q) {
        const k = gemmaValue(s, i);
        key = String(k.value);
        i = k.end;
      } else {
        const m = /^"?([^":{}[\],]+?)"?\s*(?=:)/u.exec(s.slice(i));
        if (!m) throw new Error("expected a key");
        key = m[1]!.trim();
        i += m[0].length;
      }
      while (/\s/.test(s[i] ?? "")) i++;
      if (s[i] !== ":") throw new Error("expected :");
      const v = gemmaValue(s, i + 1);
      out[key] = v.value;
      i = v.end;
    }
  }
  if (s[i] === "[") {
    const out: unknown[] = [];
    i++;
    for (;;) {
      while (/[\s,]/.test(s[i] ?? "")) i++;
      if (s[i] === "]") return { value: out, end: i + 1 };
      if (i >= s.length) throw new Error("unterminated list");
      const v = gemmaValue(s, i);
      out.push(v.value);
      i = v.end;
    }
  }
  if (s[i] === '"') {
    const m = /^"((?:[^"\\]|\\.)*)"/.exec(s.slice(i));
    if (!m) throw new Error("unterminated string");
    return { value: lenientJson(m[0]), end: i + m[0].length };
  }
  const m = /^[^,}\]]*/.exec(s.slice(i))!;
  const raw = m[0].trim();
  if (!raw) throw new Error("expected a value");
  const parsed = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)$/.test(raw)
    ? (JSON.parse(raw) as unknown)
    : raw;
  return { value: parsed, end: i + m[0].length };
}

/** Reads Gemma's `{key:<|"|>text<|"|>,n:5,…}` argument block; undefined if malformed. */
function gemmaArgs(body: string): { args: Record<string, unknown>; end: number } | undefined {
  try {
    const v = gemmaValue(body, 0);
    return v.value && typeof v.value === "object" && !Array.isArray(v.value)
      ? { args: v.value as Record<string, unknown>, end: v.end }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Gemma: Gemma 4's `<|tool_call>call:name{…}<tool_call|>`, FunctionGemma's
 * `<start_function_call>call:name{…}<end_function_call>`, bare `call:name{…}`, and ```tool_code
 * blocks.
 */
export const gemmaFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of text.matchAll(
    /(<start_function_call>\s*|<\|tool_call>\s*)?(?:^|(?<=\s|>))call:([\p{L}\p{N}_.-]+)\s*(?=\{)/gmu,
  )) {
    const at = m.index + m[0].length;
    const parsed = gemmaArgs(text.slice(at));
    if (!parsed) {
      out.push({
        start: m.index,
        end: at,
        calls: [],
        problem: `call:${m[2]} must be followed by {key:<escape>value<escape>, …}`,
      });
      continue;
    }
    let end = at + parsed.end;
    const close = /^\s*(<end_function_call>|<tool_call\|>)/.exec(text.slice(end));
    if (close) end += close[0].length;
    out.push({
      start: m.index,
      end,
      calls: [{ name: m[2]!, arguments: parsed.args, textValues: true }],
    });
  }
  for (const m of text.matchAll(/```tool_code\s*\n([\s\S]*?)```/g)) {
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
  for (const m of text.matchAll(/<\|python_start\|>([\s\S]*?)(<\|python_end\|>|$)/g)) {
    const calls = parsePythonCalls(m[1]!);
    out.push(spanOf(m, calls, '<|python_start|> must hold calls like [get_weather(city="Paris")]'));
  }
  if (out.length) return out;
  // The list on one line or spread over several, one call a line (end-of-turn tokens may follow).
  for (const m of text.matchAll(
    /^[ \t]*(\[\s*[A-Za-z_][\w.-]*\([\s\S]*?\)\s*\])[ \t]*(?=$|<\||<｜|<\/s>|<end_of_turn>|<turn\|>)/gm,
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
  for (const m of text.matchAll(/<\|tool_call_start\|>([\s\S]*?)(<\|tool_call_end\|>|$)/g)) {
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
