/**
 * Formats whose arguments are written as text or Python: Qwen3-Coder and GLM-4.5 XML, Gemma's
 * `call:name{…}` and tool_code blocks, pythonic lists (Llama 3.2/4) and LFM2.
 */
import { lenientJson, parsePythonCalls } from "./scan.js";
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

/** Qwen3-Coder: `<tool_call><function=name><parameter=k>v</parameter></function></tool_call>`. */
export const qwen3CoderFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  const re =
    /(?:<tool_call>\s*)?<function=([\w.-]+)>(?!\s*\{)([\s\S]*?)(?:<\/function>\s*(?:<\/tool_call>)?|$)/g;
  for (const m of text.matchAll(re)) {
    const args: Record<string, unknown> = {};
    for (const p of m[2]!.matchAll(
      /<parameter=([\w.-]+)>([\s\S]*?)(?:<\/parameter>|(?=<parameter=)|$)/g,
    )) {
      args[p[1]!] = xmlValue(p[2]!);
    }
    const unclosed =
      !/<\/function>/.test(m[0]) && /<parameter=/.test(m[2]!) === false && m[2]!.trim() !== "";
    out.push(
      unclosed
        ? {
            start: m.index,
            end: m.index + m[0].length,
            calls: [],
            problem: `<function=${m[1]}> must contain <parameter=name>value</parameter> elements and end with </function>`,
          }
        : {
            start: m.index,
            end: m.index + m[0].length,
            calls: [{ name: m[1]!, arguments: args, textValues: true }],
          },
    );
  }
  return out;
};

/** GLM-4.5: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`. */
export const glmFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of text.matchAll(
    /<tool_call>\s*([\w.-]+)\s*((?:<arg_key>[\s\S]*?)?)(<\/tool_call>|$)/g,
  )) {
    if (!/<arg_key>/.test(m[2]!) && m[3] !== "</tool_call>") continue;
    const args: Record<string, unknown> = {};
    const pairs = [
      ...m[2]!.matchAll(/<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)<\/arg_value>/g),
    ];
    for (const p of pairs) args[p[1]!.trim()] = p[2]!;
    const keys = (m[2]!.match(/<arg_key>/g) ?? []).length;
    out.push(
      keys !== pairs.length
        ? {
            start: m.index,
            end: m.index + m[0].length,
            calls: [],
            problem: "each <arg_key>k</arg_key> must be followed by <arg_value>v</arg_value>",
          }
        : {
            start: m.index,
            end: m.index + m[0].length,
            calls: [{ name: m[1]!, arguments: args, textValues: true }],
          },
    );
  }
  return out;
};

/** Reads Gemma's `{key:<escape>text<escape>,n:5}` argument block; undefined if malformed. */
function gemmaArgs(body: string): { args: Record<string, unknown>; end: number } | undefined {
  const args: Record<string, unknown> = {};
  let i = 1;
  const ws = () => {
    while (/\s/.test(body[i] ?? "")) i++;
  };
  for (;;) {
    ws();
    if (body[i] === "}") return { args, end: i + 1 };
    const key = /^"?([\w.-]+)"?\s*:/.exec(body.slice(i));
    if (!key) return undefined;
    i += key[0].length;
    ws();
    let value: unknown;
    if (body.startsWith("<escape>", i)) {
      const close = body.indexOf("<escape>", i + 8);
      if (close < 0) return undefined;
      value = body.slice(i + 8, close);
      i = close + 8;
    } else if (body[i] === '"') {
      const m = /^"((?:[^"\\]|\\.)*)"/.exec(body.slice(i));
      if (!m) return undefined;
      value = lenientJson(m[0]);
      i += m[0].length;
    } else {
      const m = /^[^,}]*/.exec(body.slice(i))!;
      const raw = m[0].trim();
      const parsed = lenientJson(raw);
      value = parsed === undefined ? raw : parsed;
      i += m[0].length;
    }
    args[key[1]!] = value;
    ws();
    if (body[i] === ",") i++;
  }
}

/** Gemma: `<start_function_call>call:name{…}<end_function_call>`, bare `call:name{…}`, and ```tool_code blocks. */
export const gemmaFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of text.matchAll(
    /(<start_function_call>\s*)?(?:^|(?<=\s|>))call:([\w.-]+)\s*(?=\{)/gm,
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
    const close = /^\s*<end_function_call>/.exec(text.slice(end));
    if (close) end += close[0].length;
    out.push({ start: m.index, end, calls: [{ name: m[2]!, arguments: parsed.args }] });
  }
  for (const m of text.matchAll(/```tool_code\s*\n([\s\S]*?)```/g)) {
    const code = m[1]!.trim().replace(/^print\(([\s\S]*)\)$/, "$1");
    const calls = parsePythonCalls(code);
    out.push(
      spanOf(m, calls, 'a tool_code block must hold one call like get_weather(city="Paris")'),
    );
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
  for (const m of text.matchAll(/^[ \t]*(\[[A-Za-z_][\w.-]*\([\s\S]*?\)\])[ \t]*$/gm)) {
    const calls = parsePythonCalls(m[1]!);
    if (calls) out.push({ start: m.index, end: m.index + m[0].length, calls });
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
