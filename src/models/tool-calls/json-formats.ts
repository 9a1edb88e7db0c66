/**
 * Formats whose arguments are JSON: Hermes/Qwen, Llama 3.x JSON, Mistral, Granite, Phi-4-mini,
 * Functionary and Command R. Each extractor returns the spans
 * it claims; a span with markup but no valid call carries a `problem`.
 */
import { balancedEnd, jsonAt, lenientJson, parsePythonCalls, parsePythonLines } from "./scan.js";
import type { Extraction, Extractor, RawCall } from "./types.js";

/** Reads one call object in any of the common key spellings. */
export function callFromObject(o: unknown): RawCall | undefined {
  if (!o || typeof o !== "object" || Array.isArray(o)) return undefined;
  const r = o as Record<string, unknown>;
  const fn =
    r.function && typeof r.function === "object"
      ? (r.function as Record<string, unknown>)
      : undefined;
  const name =
    r.name ??
    r.tool_name ??
    r.tool ??
    fn?.name ??
    (typeof r.function === "string" ? r.function : undefined);
  if (typeof name !== "string" || !name) return undefined;
  let args: unknown =
    r.arguments ?? r.parameters ?? r.args ?? r.input ?? fn?.arguments ?? fn?.parameters ?? {};
  if (typeof args === "string") args = args.trim() ? lenientJson(args) : {};
  if (!args || typeof args !== "object" || Array.isArray(args)) return undefined;
  return { name, arguments: args };
}

/** Calls from a parsed JSON value: one object or an array of them; undefined if any is not a call. */
export function callsFromJson(value: unknown): RawCall[] | undefined {
  const list = Array.isArray(value) ? value : [value];
  const calls = list.map(callFromObject);
  return calls.length > 0 && calls.every((c): c is RawCall => c !== undefined) ? calls : undefined;
}

/**
 * A span starting at a marker, followed by JSON (object or array) of calls. With `keepValid`, a
 * list keeps its valid calls and drops the malformed ones (Command R writes a list of actions).
 */
function markerThenJson(marker: string | RegExp, closing?: string, keepValid = false): Extractor {
  return (text) => {
    const out: Extraction[] = [];
    const re =
      typeof marker === "string"
        ? new RegExp(marker.replace(/[|[\]\\^$.*+?(){}]/g, "\\$&"), "g")
        : marker;
    for (const m of text.matchAll(re)) {
      const start = m.index;
      const json = jsonAt(text, start + m[0].length);
      let end = json?.end ?? start + m[0].length;
      if (closing) {
        const close = text.indexOf(closing, end);
        if (close >= 0 && text.slice(end, close).trim() === "") end = close + closing.length;
      }
      const listed = json
        ? keepValid
          ? (Array.isArray(json.value) ? json.value : [json.value])
              .map(callFromObject)
              .filter((c): c is RawCall => c !== undefined)
          : callsFromJson(json.value)
        : undefined;
      const calls = listed?.length ? listed : undefined;
      out.push(
        calls
          ? { start, end, calls }
          : {
              start,
              end: Math.max(end, start + m[0].length),
              calls: [],
              problem: `${m[0].trim()} is not followed by valid JSON of the form {"name": …, "arguments": {…}}`,
            },
      );
    }
    return out;
  };
}

export const graniteFormat: Extractor = markerThenJson("<|tool_call|>");
export const phiFormat: Extractor = markerThenJson(/functools(?=\s*\[)/g);
export const commandRFormat: Extractor = (text, ctx) => [
  ...markerThenJson("<|START_ACTION|>", "<|END_ACTION|>", true)(text, ctx),
  ...markerThenJson(/Action:\s*```(?:json)?/g, "```", true)(text, ctx),
  ...markerThenJson(/Action:\s*(?=[[{])/g, undefined, true)(text, ctx),
];

/** `[TOOL_CALLS][{…}]` (v0.3) and `[TOOL_CALLS]name[ARGS]{…}` (newer tokenizers). */
export const mistralFormat: Extractor = (text, ctx) => {
  const out: Extraction[] = [];
  const re =
    /\[TOOL_CALLS\]\s*([\p{L}_][\p{L}\p{N}_.-]*)(?:\[CALL_ID\][\w-]*)?(?:\[ARGS\]|(?=\s*\{))/gu;
  for (const m of text.matchAll(re)) {
    const json = jsonAt(text, m.index + m[0].length);
    const args = json?.value;
    out.push(
      json && args && typeof args === "object" && !Array.isArray(args)
        ? { start: m.index, end: json.end, calls: [{ name: m[1]!, arguments: args }] }
        : {
            start: m.index,
            end: m.index + m[0].length,
            calls: [],
            problem: `[ARGS] after ${m[1]} is not a JSON object`,
          },
    );
  }
  const claimed = (i: number) => out.some((e) => i >= e.start && i < e.end);
  for (const e of markerThenJson(/\[TOOL_CALLS\](?=\s*[[{])/g)(text, ctx))
    if (!claimed(e.start)) out.push(e);
  return out;
};

/**
 * `<tool_call>{json}</tool_call>`; also JSON arrays or several objects inside (Granite 3.3, small
 * Qwen models), and a Python call (`<tool_call>f(a=1)</tool_call>`). XML bodies are left to their
 * own formats.
 */
export const hermesFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of text.matchAll(/<tool_call>([\s\S]*?)(<\/tool_call>|(?=<tool_call>)|$)/g)) {
    const body = m[1]!.trim();
    if (body.startsWith("<function=") || /<arg_key>/.test(body)) continue;
    const start = m.index;
    const end = start + m[0].length;
    let calls: RawCall[] | undefined;
    if (body.startsWith("{") || body.startsWith("[")) {
      const values: unknown[] = [];
      let i = 0;
      while (i < body.length) {
        while (i < body.length && /[\s,;]/.test(body[i]!)) i++;
        if (i >= body.length) break;
        const close = balancedEnd(body, i);
        const value = lenientJson(body.slice(i, close > 0 ? close : body.length));
        if (value === undefined) break;
        values.push(value);
        if (close < 0) break;
        i = close;
      }
      const found = values
        .flatMap((v): unknown[] => (Array.isArray(v) ? (v as unknown[]) : [v]))
        .map(callFromObject);
      calls = found.filter((c): c is RawCall => c !== undefined);
      if (!calls.length) calls = undefined;
    } else calls = parsePythonCalls(body);
    out.push(
      calls
        ? { start, end, calls }
        : {
            start,
            end,
            calls: [],
            problem: `<tool_call> must hold JSON like {"name": "write_file", "arguments": {…}}; got ${JSON.stringify(body.slice(0, 60))}`,
          },
    );
  }
  return out;
};

/**
 * Llama 3.x JSON calls: `{"name": …, "parameters": …}` at the start of the reply, after
 * `<|python_tag|>` or in a ```json fence; several separated by `;`. When salvaging (the offered tools
 * are known), a call object anywhere in the text counts too.
 */
export const llamaJsonFormat: Extractor = (text, ctx) => {
  const out: Extraction[] = [];
  const starts = new Set<number>();
  const lead = /^\s*(<\|python_tag\|>)?\s*/.exec(text)!;
  // A reply that is a call object, or a list of them (not `[TOOL_CALLS]` or other bracketed text).
  if (/^(\{|\[\s*\{)/.test(text.slice(lead[0].length))) starts.add(lead[0].length);
  for (const m of text.matchAll(/<\|python_tag\|>\s*/g)) starts.add(m.index + m[0].length);
  for (const m of text.matchAll(/```(?:json|tool_call|tool)?\s*\n?(?=[{[])/g))
    starts.add(m.index + m[0].length);
  if (ctx.salvage)
    for (const m of text.matchAll(/\{\s*"(name|tool|tool_name|function)"\s*:/g))
      starts.add(m.index);
  for (const s of [...starts].sort((a, b) => a - b)) {
    if (out.some((e) => s >= e.start && s < e.end)) continue;
    const calls: RawCall[] = [];
    let i = s;
    let end = s;
    for (;;) {
      const json = jsonAt(text, i);
      const c = json ? callsFromJson(json.value) : undefined;
      if (!json || !c) break;
      calls.push(...c);
      end = json.end;
      const sep = /^\s*;\s*/.exec(text.slice(end));
      if (!sep) break;
      i = end + sep[0].length;
    }
    if (calls.length === 0) {
      // After <|python_tag|>: a built-in tool (`brave_search.call(query="…")`) or Python calls.
      const tag = /<\|python_tag\|>\s*$/.exec(text.slice(0, s));
      if (!tag) continue;
      const stop = /<\|eom_id\|>|<\|eot_id\|>|$/.exec(text.slice(s))!;
      const code = text.slice(s, s + stop.index).trim();
      const py = parsePythonCalls(code) ?? parsePythonLines(code);
      if (!py) continue;
      out.push({
        start: tag.index,
        end: s + stop.index + stop[0].length,
        calls: py.map((c) => ({ name: c.name.replace(/\.call$/, ""), arguments: c.arguments })),
      });
      continue;
    }
    let start = s;
    const before = text.slice(0, s);
    const fence = /```(?:json|tool_call|tool)?\s*\n?$/.exec(before);
    const tag = /<\|python_tag\|>\s*$/.exec(before);
    if (fence) start = fence.index;
    else if (tag) start = tag.index;
    if (fence) {
      const close = /^\s*```/.exec(text.slice(end));
      if (close) end += close[0].length;
    }
    const eom = /^\s*<\|eom_id\|>/.exec(text.slice(end));
    if (eom) end += eom[0].length;
    out.push({ start, end, calls });
  }
  return out;
};

/**
 * Functionary: `<function=name>{json}</function>` (v3.1) and `>>>name\n{json}` (v3.2, where the
 * first `>>>` is part of the prompt, so a reply may begin with `name\n{json}`: read only when the
 * offered tools are known); `>>>python\n` is followed by raw code.
 */
export const functionaryFormat: Extractor = (text, ctx) => {
  const out: Extraction[] = [];
  for (const m of text.matchAll(/<function=([^>\n]+)>\s*(?=\{)/gu)) {
    const json = jsonAt(text, m.index + m[0].length);
    if (!json || typeof json.value !== "object" || Array.isArray(json.value) || !json.value) {
      out.push({
        start: m.index,
        end: m.index + m[0].length,
        calls: [],
        problem: `<function=${m[1]}> is not followed by a JSON object`,
      });
      continue;
    }
    const close = /^\s*<\/function>/.exec(text.slice(json.end));
    out.push({
      start: m.index,
      end: json.end + (close?.[0].length ?? 0),
      calls: [{ name: m[1]!.trim(), arguments: json.value }],
    });
  }
  const v32 = ctx.salvage
    ? /(?:^|>>>)\s*([\p{L}_][\p{L}\p{N}_.-]*)\s*\n/gu
    : />>>\s*([\p{L}_][\p{L}\p{N}_.-]*)\s*\n/gu;
  for (const m of text.matchAll(v32)) {
    if (out.some((e) => m.index >= e.start && m.index < e.end)) continue;
    const from = m.index + m[0].length;
    if (m[1] === "all") {
      // `>>>all\n` introduces text for the user: only the header is markup.
      if (m[0].includes(">>>")) out.push({ start: m.index, end: from, calls: [] });
      continue;
    }
    const next = text.indexOf(">>>", from);
    const until = next < 0 ? text.length : next;
    if (m[1] === "python" && text[from] !== "{") {
      out.push({
        start: m.index,
        end: until,
        calls: [{ name: "python", arguments: { code: text.slice(from, until).trim() } }],
      });
      continue;
    }
    const json = jsonAt(text, from);
    if (json && json.value && typeof json.value === "object" && !Array.isArray(json.value)) {
      out.push({ start: m.index, end: json.end, calls: [{ name: m[1]!, arguments: json.value }] });
    }
  }
  return out;
};
