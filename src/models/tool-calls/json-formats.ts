/**
 * Formats whose arguments are JSON after a marker: Llama 3.x JSON, Mistral, Granite, Phi-4-mini and
 * Command R. Each extractor returns the spans it claims; a span with markup but no valid call
 * carries a `problem`, a list's invalid entries are in `rejected`.
 */
import { callsFromJson, jsonEntries, splitEntries } from "./entries.js";
import { inline, jsonAt, parsePythonCalls, parsePythonLines } from "./scan.js";
import { endOfTurnAt, onlyEndOfTurn } from "./end-of-turn.js";
import type { Extraction, Extractor, RawCall } from "./types.js";

/**
 * A span starting at a marker, followed by JSON (object or array) of calls. With `keepValid`, a
 * list keeps its valid calls and reports the malformed ones (Command R writes a list of actions).
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
      const from = start + m[0].length;
      const close = closing && !json ? text.indexOf(closing, from) : -1;
      // A list that does not parse as a whole is read entry by entry up to its closing marker.
      const entries = json
        ? keepValid
          ? splitEntries([json.value])
          : { calls: callsFromJson(json.value) ?? [], rejected: [] }
        : keepValid && close > 0
          ? jsonEntries(text, from, close)
          : undefined;
      if (close > 0 && entries?.calls.length) end = close + closing!.length;
      out.push(
        entries?.calls.length
          ? {
              start,
              end,
              calls: entries.calls,
              ...(entries.rejected.length ? { rejected: entries.rejected } : {}),
            }
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

/** `[TOOL_CALLS]name[ARGS]`, the `[ARGS]` optional before `{`; an optional `[CALL_ID]id`. */
const MISTRAL_V11 =
  /\[TOOL_CALLS\]\s*([\p{L}_][\p{L}\p{N}_.-]*)\s*(?:\[CALL_ID\]\s*[\w-]*\s*)?(?:\[ARGS\]|(?=\{))/gu;
/** `name[ARGS]` with the `[TOOL_CALLS]` token gone (a server that skips special tokens). */
const MISTRAL_BARE =
  /(?<![\p{L}\p{N}_.-])([\p{L}_][\p{L}\p{N}_.-]*)\s*(?:\[CALL_ID\]\s*[\w-]*\s*)?\[ARGS\]/gu;

/**
 * `[TOOL_CALLS][{…}]` (v0.3) and `[TOOL_CALLS]name[ARGS]{…}` (v11 and later tokenizers, with an
 * optional `[CALL_ID]id`); the detokenised markers may have whitespace around them, and
 * `[TOOL_CALLS]` may be missing (skipped as a special token) where `[ARGS]` is there.
 */
export const mistralFormat: Extractor = (text, ctx) => {
  const out: Extraction[] = [];
  const matches = [...text.matchAll(MISTRAL_V11), ...text.matchAll(MISTRAL_BARE)];
  for (const m of matches) {
    if (out.some((e) => m.index >= e.start && m.index < e.end)) continue;
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

/** Where a call object (or a list of them) can start: its first key is one a call has. */
const CALL_OBJECT =
  /(?:\[\s*)?\{\s*"(?:name|tool|tool_name|function|type|arguments|parameters|tool_calls)"\s*:/g;
const FENCE = /```(?:json|xml|tool_call|tool)?[ \t]*\n?\s*(?=[{[])/g;
const FENCE_BEFORE = /```(?:json|xml|tool_call|tool)?[ \t]*\n?\s*$/;

/**
 * Llama 3.x JSON calls: `{"name": …, "parameters": …}` (or `"arguments"`) at the start of the
 * reply, after `<|python_tag|>`, in a ```json fence, or after some prose; several separated by `;`. A fenced or after-prose call must end the reply (a model stops after its call;
 * an example in the middle of an explanation is not one). When salvaging (the offered tools are
 * known), a call object anywhere in the text counts too.
 */
export const llamaJsonFormat: Extractor = (text, ctx) => {
  const out: Extraction[] = [];
  /** Start offsets, and whether the call found there must end the reply. */
  const starts = new Map<number, boolean>();
  const add = (at: number, terminal: boolean) =>
    starts.set(at, (starts.get(at) ?? true) && terminal);
  const lead = /^\s*(<\|python_tag\|>)?\s*/.exec(text)!;
  // A reply that is a call object, or a list of them (not `[TOOL_CALLS]` or other bracketed text).
  if (/^(\{|\[\s*\{)/.test(text.slice(lead[0].length))) add(lead[0].length, false);
  for (const m of text.matchAll(/<\|python_tag\|>\s*/g)) add(m.index + m[0].length, false);
  for (const m of text.matchAll(FENCE)) add(m.index + m[0].length, !ctx.salvage);
  // A call object after prose; anywhere when salvaging, else only as the reply's last word. Not an
  // entry of a list or object that does not parse (cut short): never the list's last call alone.
  for (const m of text.matchAll(CALL_OBJECT))
    if (!/([[{,]|"\s*:)\s*$/.test(text.slice(Math.max(0, m.index - 40), m.index)))
      add(m.index, !ctx.salvage);
  const terminal: boolean[] = [];
  for (const s of [...starts.keys()].sort((a, b) => a - b)) {
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
      const sep = /^\s*[;,]\s*/.exec(text.slice(end));
      if (!sep) break;
      i = end + sep[0].length;
    }
    if (calls.length === 0) {
      const code = pythonTagCode(text, s);
      if (code) out.push(code);
      if (code) terminal.push(false);
      continue;
    }
    let start = s;
    const before = text.slice(0, s);
    const fence = FENCE_BEFORE.exec(before);
    const tag = /<\|python_tag\|>\s*$/.exec(before);
    if (fence) start = fence.index;
    else if (tag) start = tag.index;
    if (fence) {
      const close = /^\s*```/.exec(text.slice(end));
      if (close) end += close[0].length;
    }
    end += endOfTurnAt(text, end);
    out.push({ start, end, calls });
    terminal.push(starts.get(s)!);
  }
  // A span that must end the reply keeps only whitespace, end-of-turn tokens or other kept calls
  // after it.
  const kept: Extraction[] = [];
  let tail = text.length;
  for (let k = out.length - 1; k >= 0; k--) {
    const e = out[k]!;
    if (terminal[k] && !onlyEndOfTurn(text, e.end, tail)) continue;
    kept.unshift(e);
    tail = e.start;
  }
  return kept;
};

/**
 * After `<|python_tag|>`: a built-in tool (`brave_search.call(query="…")`), Python calls, or raw
 * code for the `python` tool (Functionary v3.1, Llama 3.1's code interpreter).
 */
function pythonTagCode(text: string, s: number): Extraction | undefined {
  const tag = /<\|python_tag\|>\s*$/.exec(text.slice(0, s));
  if (!tag) return undefined;
  const stop = /<\|eom_id\|>|<\|eot_id\|>|$/.exec(text.slice(s))!;
  const code = text.slice(s, s + stop.index).trim();
  if (!code || /^[{[]/.test(code)) return undefined;
  const end = s + stop.index + stop[0].length;
  const py = parsePythonCalls(code) ?? parsePythonLines(code);
  // A built-in call that does not parse (cut short) is a broken call, not code to run; the tag
  // inside a sentence ("it starts with the <|python_tag|> token.") is a mention.
  if (!py && (/^[\w.]+\.call\s*\(/.test(code) || inline(text, tag.index))) return undefined;
  const calls = py
    ? py.map((c) => ({ name: c.name.replace(/\.call$/, ""), arguments: c.arguments }))
    : [{ name: "python", arguments: { code } }];
  return { start: tag.index, end, calls };
}
