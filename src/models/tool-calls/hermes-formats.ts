/**
 * Hermes (`<tool_call>{json}</tool_call>`, Qwen 2.5/3, Hermes 2/3) and the shapes models drift to
 * from it, as llama.cpp's Hermes reader also accepts them: the call object in `<tool>`, `<tools>`,
 * `<response>`, `<json>` or `<xml>` tags (`<function_call>` is Granite 20B's reader's), a ```json /
 * ```xml fence around the tags; and Functionary's `<function=name>{json}</function>` (v3.1; also written
 * `<function name="name">`) and `>>>name\n{json}` (v3.2).
 */
import { jsonEntries } from "./entries.js";
import { charge, scanAll } from "./meter.js";
import { find, inline, jsonAt, parsePythonCalls } from "./scan.js";
import type { Extraction, Extractor, RawCall, RejectedCall } from "./types.js";

const HERMES =
  /(```(?:json|xml)?[ \t]*\n\s*)?<(tool_call|longcat_tool_call|tools?|response|json|xml|JSON)>([\s\S]*?)(<\/\2>|(?=<\2>)|$)/g;

/** A Hermes body: JSON call objects (a list, several), or Python calls (`f(a=1)`, `[f(a=1)]`). */
function readBody(body: string): { calls: RawCall[]; rejected: RejectedCall[] } {
  if (!/^[{[]/.test(body)) return { calls: parsePythonCalls(body) ?? [], rejected: [] };
  const read = jsonEntries(body);
  if (read.calls.length) return read;
  // Some Qwen templates end a call with a stray brace pair: `{{"name": …, "arguments": {…}}}}`.
  const braces = /^\{\s*(\{[\s\S]*\})\s*\}\s*\}$/.exec(body);
  const unbraced = braces ? jsonEntries(braces[1]!) : undefined;
  if (unbraced?.calls.length && !unbraced.rejected.length) return unbraced;
  const py = body.startsWith("[") ? parsePythonCalls(body) : undefined;
  return py ? { calls: py, rejected: [] } : read;
}

/**
 * `<tool_call>{json}</tool_call>`; also JSON arrays or several objects inside (Granite 3.3, small
 * Qwen models), and a Python call (`<tool_call>f(a=1)</tool_call>`). The other wrappers count only
 * around a call object (`{"name": …`); XML bodies are left to their own formats.
 */
export const hermesFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  let after = 0;
  for (const m of scanAll(HERMES, text)) {
    if (m.index < after) continue;
    const tag = m[2]!;
    // A ```json fence inside the tags (small models fence whatever JSON they write).
    let body = m[3]!
      .trim()
      .replace(/^```(?:json)?[ \t]*\n([\s\S]*?)\n?[ \t]*```$/, "$1")
      .trim();
    if (!tag.endsWith("tool_call") && !/^\{\s*"name"\s*:/.test(body)) continue;
    if (body.startsWith("<function=") || /<arg_key>/.test(body)) continue;
    // An unclosed tag inside a sentence ("the parser looks for the <tool_call> tag"): a mention.
    if (!m[4] && inline(text, m.index) && !/^[{[]|^[A-Za-z_][\w.-]*\s*\(/.test(body)) continue;
    const start = m.index;
    let end = start + m[0].length;
    let { calls, rejected } = readBody(body);
    if (!calls.length && /^[{[]/.test(body)) {
      // The close tag inside a JSON string (a file about this very format) ended the body early:
      // the balanced JSON and the close tag after it.
      const json = jsonAt(text, start + (m[1]?.length ?? 0) + tag.length + 2);
      const close = json && new RegExp(String.raw`^\s*<\/${tag}>`).exec(text.slice(json.end));
      if (json && close && json.end > start + m[0].length - (m[4]?.length ?? 0)) {
        body = text.slice(start + (m[1]?.length ?? 0) + tag.length + 2, json.end).trim();
        ({ calls, rejected } = readBody(body));
        end = json.end + close[0].length;
      }
    }
    if (m[1]) {
      const close = /^\s*```/.exec(text.slice(end));
      if (close) end += close[0].length;
    }
    after = end;
    // Other wrappers hold answers too (Granite's <response>): without a call they are just text.
    if (!tag.endsWith("tool_call") && !calls.length) continue;
    out.push(
      calls.length
        ? { start, end, calls, ...(rejected.length ? { rejected } : {}) }
        : {
            start,
            end,
            calls: [],
            problem: `<${tag}> must hold JSON like {"name": "write_file", "arguments": {…}}; got ${JSON.stringify(body.slice(0, 60))}${rejected.length ? ` (${rejected[0]!.reason})` : ""}`,
          },
    );
  }
  return out;
};

/** `<function=name>` or `<function name="name">` followed by a JSON object. */
const FUNCTION_TAG =
  /(<tool_call>\s*)?<function(?:=([^<>\n]+)|\s+name\s*=\s*"([^"<>\n]+)")>\s*(?=\{)/gu;

/**
 * Functionary: `<function=name>{json}</function>` (v3.1) and `>>>name\n{json}` (v3.2, where the
 * first `>>>` is part of the prompt, so a reply may begin with `name\n{json}`: read only when the
 * offered tools are known); `>>>python\n` is followed by raw code, `>>>all\n` by text for the user.
 */
export const functionaryFormat: Extractor = (text, ctx) => {
  const out: Extraction[] = [];
  let inside = 0;
  for (const m of scanAll(FUNCTION_TAG, text)) {
    if (m.index < inside) continue; // in the JSON of the call before
    const name = (m[2] ?? m[3]!).trim();
    const json = jsonAt(text, m.index + m[0].length);
    if (!json || typeof json.value !== "object" || Array.isArray(json.value) || !json.value) {
      out.push({
        start: m.index,
        end: m.index + m[0].length,
        calls: [],
        problem: `<function=${name}> is not followed by a JSON object`,
      });
      continue;
    }
    const close = m[1]
      ? /^\s*<\/function>\s*(<\/tool_call>)?/.exec(text.slice(json.end))
      : /^\s*<\/function>/.exec(text.slice(json.end));
    inside = json.end + (close?.[0].length ?? 0);
    out.push({ start: m.index, end: inside, calls: [{ name, arguments: json.value }] });
  }
  const v32 = ctx.salvage
    ? /(?:^|>>>)\s*([\p{L}_][\p{L}\p{N}_.-]*)\s*\n/gu
    : />>>\s*([\p{L}_][\p{L}\p{N}_.-]*)\s*\n/gu;
  let recipients = 0;
  // the `<function=` spans are in order, and so are the recipients: a pointer walks them
  const tagged = out.length;
  let t = 0;
  let after = 0;
  for (const m of scanAll(v32, text)) {
    while (t < tagged && out[t]!.end <= m.index) t++;
    if ((t < tagged && out[t]!.start <= m.index) || m.index < after) continue;
    const from = m.index + m[0].length;
    if (m[1] === "all") {
      // `>>>all\n` introduces text for the user: only the header is markup.
      if (m[0].includes(">>>")) out.push({ start: m.index, end: from, calls: [] });
      continue;
    }
    const next = find(text, ">>>", from);
    const until = next < 0 ? text.length : next;
    if (m[1] === "python" && text[from] !== "{") {
      if (!text.slice(from, until).trim()) continue; // cut before its code
      charge(until - from);
      out.push({
        start: m.index,
        end: until,
        calls: [{ name: "python", arguments: { code: text.slice(from, until).trim() } }],
      });
      after = until;
      recipients++;
      continue;
    }
    const json = jsonAt(text, from);
    if (json && json.value && typeof json.value === "object" && !Array.isArray(json.value)) {
      out.push({ start: m.index, end: json.end, calls: [{ name: m[1]!, arguments: json.value }] });
      after = json.end;
      recipients++;
    }
  }
  // The reply's own first recipient is `all` without `>>>` (the prompt wrote it): a header too.
  const all = /^\s*all[ \t]*\n/.exec(text);
  if (all && recipients > 0 && !out.some((e) => e.start === 0))
    out.push({ start: 0, end: all[0].length, calls: [] });
  return out;
};
