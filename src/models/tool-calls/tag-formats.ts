/**
 * Families whose calls sit inside their own tags: OLMo 3 (`<function_calls>` with Python calls),
 * Nemotron (`<TOOLCALL>`), MiniMax M1 / Hunyuan / Jamba (`<tool_calls>` with JSON), MiniMax M2
 * (`<minimax:tool_call>` XML), InternLM2 (`<|action_start|><|plugin|>`), Granite 20B FC
 * (`<function_call>`), Apertus (`<|tools_prefix|>`). Formats learnt from the models' chat templates
 * and model cards, and SGLang's function-call detectors.
 */
import { jsonEntries, readCall, splitEntries, type Entries } from "./entries.js";
import { jsonAt, lenientJson, parsePythonLines } from "./scan.js";
import type { Extraction, Extractor, RawCall } from "./types.js";

/** Spans `open … close` (or to the end when unclosed); each body read by `read`. */
function tagged(
  open: RegExp,
  close: string,
  read: (body: string) => RawCall[] | Entries | undefined,
  problem: string,
): Extractor {
  return (text) => {
    const out: Extraction[] = [];
    for (const m of text.matchAll(open)) {
      const from = m.index + m[0].length;
      const at = text.indexOf(close, from);
      const end = at < 0 ? text.length : at + close.length;
      const got = read(text.slice(from, at < 0 ? text.length : at));
      const { calls, rejected } = Array.isArray(got)
        ? { calls: got, rejected: [] }
        : (got ?? { calls: [], rejected: [] });
      out.push(
        calls.length
          ? { start: m.index, end, calls, ...(rejected.length ? { rejected } : {}) }
          : {
              start: m.index,
              end,
              calls: [],
              problem: rejected.length ? `${problem} (${rejected[0]!.reason})` : problem,
            },
      );
    }
    return out;
  };
}

const jsonCalls = jsonEntries;

/** OLMo 3: `<function_calls>\nf(a=1)\ng(b="x")\n</function_calls>`. */
export const olmo3Format = tagged(
  /<function_calls>/g,
  "</function_calls>",
  (body) => parsePythonLines(body),
  '<function_calls> must hold one call per line, like get_weather(city="Paris")',
);

/** Nemotron (v1, v2 Nano): `<TOOLCALL>[{"name": …, "arguments": {…}}]</TOOLCALL>`. */
export const nemotronFormat = tagged(
  /<TOOLCALL>/g,
  "</TOOLCALL>",
  jsonCalls,
  '<TOOLCALL> must hold a JSON list like [{"name": …, "arguments": {…}}]',
);

/** MiniMax M1 (JSON objects one per line), Hunyuan and Jamba (a JSON list): `<tool_calls>…</tool_calls>`. */
export const toolCallsBlockFormat = tagged(
  /<tool_calls>/g,
  "</tool_calls>",
  jsonCalls,
  '<tool_calls> must hold calls like {"name": …, "arguments": {…}}',
);

/**
 * Granite 20B FC: `<function_call> {"name": …, "arguments": {…}}`, repeated for several calls (a
 * closing `</function_call>`, which models drifting from Hermes write, is part of it).
 */
export const granite20bFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of text.matchAll(/<function_call>/g)) {
    const json = jsonAt(text, m.index + m[0].length);
    const { calls, rejected } = json ? splitEntries([json.value]) : { calls: [], rejected: [] };
    const close = json ? /^\s*<\/function_call>/.exec(text.slice(json.end)) : null;
    out.push(
      calls.length
        ? {
            start: m.index,
            end: json!.end + (close?.[0].length ?? 0),
            calls,
            ...(rejected.length ? { rejected } : {}),
          }
        : {
            start: m.index,
            end: m.index + m[0].length,
            calls: [],
            problem: '<function_call> must be followed by {"name": …, "arguments": {…}}',
          },
    );
  }
  return out;
};

/** InternLM2: `<|action_start|><|plugin|>\n{"name": …, "parameters": {…}}<|action_end|>`. */
export const internlmFormat = tagged(
  /<\|action_start\|>\s*<\|plugin\|>/g,
  "<|action_end|>",
  jsonCalls,
  '<|plugin|> must hold {"name": …, "parameters": {…}}',
);

/** Apertus: `<|tools_prefix|>[{"name": {arguments}}, …]<|tools_suffix|>`. */
export const apertusFormat = tagged(
  /<\|tools_prefix\|>/g,
  "<|tools_suffix|>",
  (body) => {
    const value = lenientJson(body);
    const list = Array.isArray(value) ? value : value ? [value] : [];
    const calls = list.flatMap((o): RawCall[] => {
      if (!o || typeof o !== "object" || Array.isArray(o)) return [];
      const entries = Object.entries(o as Record<string, unknown>);
      if (entries.length !== 1) {
        const c = readCall(o);
        return typeof c === "string" ? [] : [c];
      }
      const [name, args] = entries[0]!;
      return args && typeof args === "object" && !Array.isArray(args)
        ? [{ name, arguments: args }]
        : [];
    });
    return calls.length ? calls : undefined;
  },
  '<|tools_prefix|> must hold a JSON list like [{"get_weather": {"city": "Paris"}}]',
);

/** Unescapes the XML entities models write inside values. */
const xmlText = (v: string) =>
  v
    .replace(/^\r?\n/, "")
    .replace(/\r?\n$/, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");

/** The `<invoke name="f"><parameter name="k">v</parameter></invoke>` calls of a MiniMax M2 body. */
function invokes(body: string): RawCall[] | undefined {
  const calls: RawCall[] = [];
  for (const inv of body.matchAll(
    /<invoke\s+name\s*=\s*["']?([^"'>]+?)["']?\s*>([\s\S]*?)(?:<\/invoke>|$)/g,
  )) {
    const args: Record<string, unknown> = {};
    for (const p of inv[2]!.matchAll(
      /<parameter\s+name\s*=\s*["']?([^"'>]+?)["']?\s*>([\s\S]*?)(?:<\/parameter>|(?=<parameter\s)|$)/g,
    ))
      args[p[1]!.trim()] = xmlText(p[2]!);
    calls.push({ name: inv[1]!.trim(), arguments: args, textValues: true });
  }
  return calls.length ? calls : undefined;
}

const minimaxWrapped = tagged(
  /<minimax:tool_call>/g,
  "</minimax:tool_call>",
  invokes,
  '<minimax:tool_call> must hold <invoke name="…"><parameter name="…">value</parameter></invoke>',
);

/**
 * MiniMax M2: `<minimax:tool_call><invoke name="f"><parameter name="k">v</parameter></invoke></minimax:tool_call>`;
 * also closed invokes without the wrapper (servers that strip it).
 */
export const minimaxM2Format: Extractor = (text, ctx) => {
  const out = minimaxWrapped(text, ctx);
  if (out.length) return out;
  for (const m of text.matchAll(/<invoke\s+name\s*=[^>]*>[\s\S]*?<\/invoke>/g)) {
    const calls = invokes(m[0]);
    if (calls) out.push({ start: m.index, end: m.index + m[0].length, calls });
  }
  return out;
};
