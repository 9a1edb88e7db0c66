/**
 * Formats whose arguments are JSON: Hermes/Qwen, Llama 3.x JSON, Mistral, Granite, Phi-4-mini,
 * Functionary, Command R, DeepSeek, Kimi K2 and gpt-oss harmony. Each extractor returns the spans
 * it claims; a span with markup but no valid call carries a `problem`.
 */
import { balancedEnd, jsonAt, lenientJson } from "./scan.js";
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

/** A span starting at a marker, followed by JSON (object or array) of calls. */
function markerThenJson(marker: string | RegExp, closing?: string): Extractor {
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
      const calls = json ? callsFromJson(json.value) : undefined;
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
  ...markerThenJson("<|START_ACTION|>", "<|END_ACTION|>")(text, ctx),
  ...markerThenJson(/Action:\s*```(?:json)?/g, "```")(text, ctx),
];

/** `[TOOL_CALLS][{…}]` (v0.3) and `[TOOL_CALLS]name[ARGS]{…}` (newer tokenizers). */
export const mistralFormat: Extractor = (text, ctx) => {
  const out: Extraction[] = [];
  const re = /\[TOOL_CALLS\]\s*([A-Za-z_][\w.-]*)(?:\[CALL_ID\][\w-]*)?\[ARGS\]/g;
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
  for (const e of markerThenJson(/\[TOOL_CALLS\](?=\s*\[)/g)(text, ctx))
    if (!claimed(e.start)) out.push(e);
  return out;
};

/** `<tool_call>{json}</tool_call>`; also JSON arrays inside (Granite 3.3). XML bodies are left to their own formats. */
export const hermesFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of text.matchAll(/<tool_call>([\s\S]*?)(<\/tool_call>|(?=<tool_call>)|$)/g)) {
    const body = m[1]!.trim();
    if (body.startsWith("<function=") || /<arg_key>/.test(body)) continue;
    const start = m.index;
    const end = start + m[0].length;
    const value =
      body.startsWith("{") || body.startsWith("[")
        ? lenientJson(body.slice(0, balancedEnd(body, 0) > 0 ? balancedEnd(body, 0) : body.length))
        : undefined;
    const calls = value === undefined ? undefined : callsFromJson(value);
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
  if (text[lead[0].length] === "{" || text[lead[0].length] === "[") starts.add(lead[0].length);
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
    if (calls.length === 0) continue;
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

/** Functionary: `<function=name>{json}</function>` (v3.1) and `>>>name\n{json}` (v3.2). */
export const functionaryFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of text.matchAll(/<function=([\w.-]+)>\s*(?=\{)/g)) {
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
      calls: [{ name: m[1]!, arguments: json.value }],
    });
  }
  for (const m of text.matchAll(/>>>\s*([\w.-]+)\s*\n/g)) {
    if (m[1] === "all") {
      out.push({ start: m.index, end: m.index + m[0].length, calls: [] });
      continue;
    }
    const json = jsonAt(text, m.index + m[0].length);
    if (json && json.value && typeof json.value === "object" && !Array.isArray(json.value)) {
      out.push({ start: m.index, end: json.end, calls: [{ name: m[1]!, arguments: json.value }] });
    }
  }
  return out;
};

/** DeepSeek V3/R1 (`function<｜tool▁sep｜>name` + fenced JSON) and V3.1 (`name<｜tool▁sep｜>{json}`). */
export const deepseekFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  const section = /<｜tool▁calls▁begin｜>([\s\S]*?)(<｜tool▁calls▁end｜>|$)/g;
  for (const m of text.matchAll(section)) {
    const calls: RawCall[] = [];
    let problem: string | undefined;
    for (const c of m[1]!.matchAll(/<｜tool▁call▁begin｜>([\s\S]*?)(<｜tool▁call▁end｜>|$)/g)) {
      const body = c[1]!;
      const v3 = /^\s*function<｜tool▁sep｜>([\w.-]+)\s*```(?:json)?\s*([\s\S]*?)```/.exec(body);
      const v31 = /^\s*([\w.-]+)<｜tool▁sep｜>\s*([\s\S]*)$/.exec(body);
      const name = v3?.[1] ?? v31?.[1];
      const args = lenientJson((v3?.[2] ?? v31?.[2] ?? "").trim());
      if (name && args && typeof args === "object" && !Array.isArray(args))
        calls.push({ name, arguments: args });
      else problem = `a DeepSeek tool call needs name<｜tool▁sep｜>{JSON arguments}`;
    }
    out.push({
      start: m.index,
      end: m.index + m[0].length,
      calls,
      ...(calls.length ? {} : { problem: problem ?? "empty tool-call section" }),
    });
  }
  return out;
};

/** Kimi K2: `<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{json}<|tool_call_end|>`. */
export const kimiFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of text.matchAll(
    /<\|tool_calls_section_begin\|>([\s\S]*?)(<\|tool_calls_section_end\|>|$)/g,
  )) {
    const calls: RawCall[] = [];
    for (const c of m[1]!.matchAll(
      /<\|tool_call_begin\|>\s*([\w.:-]+)\s*<\|tool_call_argument_begin\|>([\s\S]*?)(<\|tool_call_end\|>|$)/g,
    )) {
      const name = c[1]!.replace(/^functions\./, "").replace(/:\d+$/, "");
      const args = lenientJson(c[2]!);
      if (args && typeof args === "object" && !Array.isArray(args))
        calls.push({ name, arguments: args });
    }
    out.push({
      start: m.index,
      end: m.index + m[0].length,
      calls,
      ...(calls.length ? {} : { problem: "the Kimi tool-call section holds no valid call" }),
    });
  }
  return out;
};

/** gpt-oss harmony: `<|channel|>commentary to=functions.name <|constrain|>json<|message|>{json}<|call|>`. */
export const harmonyFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  const re =
    /(?:<\|start\|>assistant)?(?:<\|channel\|>commentary\s+to=functions\.([\w.-]+)|\s*to=functions\.([\w.-]+)\s*<\|channel\|>commentary)[^<]*(?:<\|constrain\|>\s*json\s*)?<\|message\|>/g;
  for (const m of text.matchAll(re)) {
    const name = m[1] ?? m[2]!;
    const json = jsonAt(text, m.index + m[0].length);
    if (!json || !json.value || typeof json.value !== "object" || Array.isArray(json.value)) {
      out.push({
        start: m.index,
        end: m.index + m[0].length,
        calls: [],
        problem: `the harmony message to functions.${name} is not a JSON object`,
      });
      continue;
    }
    const tail = /^\s*(<\|call\|>|<\|end\|>)?/.exec(text.slice(json.end))!;
    out.push({
      start: m.index,
      end: json.end + tail[0].length,
      calls: [{ name, arguments: json.value }],
    });
  }
  return out;
};
