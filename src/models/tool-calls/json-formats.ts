/**
 * Formats whose arguments are JSON after a marker: Llama 3.x JSON, Mistral, Granite, Phi-4-mini and
 * Command R. Each extractor returns the spans it claims; a span with markup but no valid call
 * carries a `problem`, a list's invalid entries are in `rejected`.
 */
import { callsFromJson, jsonEntries, splitEntries } from "./entries.js";
import { charge, scanAll } from "./meter.js";
import { find, inline, jsonAt, parsePythonCalls, parsePythonLines } from "./scan.js";
import { Claims } from "./spans.js";
import { endOfTurnAt, proseEnd } from "./end-of-turn.js";
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
    const matches = [...scanAll(re, text)];
    const starts = matches.map((m) => m.index);
    let k = 0;
    // where the next marker is, from `at` on: a list read entry by entry stops there
    const stop = (at: number) => {
      while (k < starts.length && starts[k]! < at) k++;
      return starts[k] ?? Infinity;
    };
    let after = 0;
    for (const [i, m] of matches.entries()) {
      const start = m.index;
      if (start < after) continue; // inside the JSON of the call before
      const json = jsonAt(text, start + m[0].length);
      let end = json?.end ?? start + m[0].length;
      if (closing) {
        const close = find(text, closing, end);
        if (
          close >= 0 &&
          /^\s*$/.test(text.slice(end, Math.min(close, end + 200))) &&
          close < end + 200
        )
          end = close + closing.length;
      }
      const from = start + m[0].length;
      const close = closing && !json ? find(text, closing, from) : -1;
      k = i + 1;
      // A list that does not parse as a whole is read entry by entry up to its closing marker.
      const read =
        keepValid && close > 0 && !json ? jsonEntries(text, from, close, stop) : undefined;
      const entries = json
        ? keepValid
          ? splitEntries([json.value])
          : { calls: callsFromJson(json.value) ?? [], rejected: [] }
        : read;
      if (read?.calls.length) end = read.end === close ? close + closing!.length : read.end;
      if (entries?.calls.length) after = end;
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
  const claims = new Claims(text.length);
  const matches = [...scanAll(MISTRAL_V11, text), ...scanAll(MISTRAL_BARE, text)];
  for (const m of matches) {
    if (claims.overlaps(m.index, m.index + 1)) continue;
    const json = jsonAt(text, m.index + m[0].length);
    const args = json?.value;
    const e =
      json && args && typeof args === "object" && !Array.isArray(args)
        ? { start: m.index, end: json.end, calls: [{ name: m[1]!, arguments: args }] }
        : {
            start: m.index,
            end: m.index + m[0].length,
            calls: [],
            problem: `[ARGS] after ${m[1]} is not a JSON object`,
          };
    out.push(e);
    if (!claims.overlaps(e.start, e.end)) claims.claim(e.start, e.end);
  }
  for (const e of markerThenJson(/\[TOOL_CALLS\](?=\s*[[{])/g)(text, ctx))
    if (!claims.overlaps(e.start, e.start + 1)) out.push(e);
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
  for (const m of scanAll(/<\|python_tag\|>\s*/g, text)) add(m.index + m[0].length, false);
  for (const m of scanAll(FENCE, text)) add(m.index + m[0].length, !ctx.salvage);
  // A call object after prose; anywhere when salvaging, else only as the reply's last word. Not an
  // entry of a list or object that does not parse (cut short): never the list's last call alone.
  for (const m of scanAll(CALL_OBJECT, text))
    if (!/([[{,]|"\s*:)\s*$/.test(text.slice(Math.max(0, m.index - 40), m.index)))
      add(m.index, !ctx.salvage);
  const terminal: boolean[] = [];
  let covered = 0; // the spans found so far are in order: one that ends last covers the rest
  for (const s of [...starts.keys()].sort((a, b) => a - b)) {
    if (s < covered) continue;
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
    // (what opens the call is just before it: a window is enough, and keeps the search linear)
    const from = Math.max(0, s - 400);
    const before = text.slice(from, s);
    charge(before.length);
    const fence = FENCE_BEFORE.exec(before);
    const tag = /<\|python_tag\|>\s*$/.exec(before);
    if (fence) start = from + fence.index;
    else if (tag) start = from + tag.index;
    if (fence) {
      const close = /^\s*```/.exec(text.slice(end));
      if (close) end += close[0].length;
    }
    end += endOfTurnAt(text, end);
    out.push({ start, end, calls });
    covered = Math.max(covered, end);
    terminal.push(starts.get(s)!);
  }
  // A span that must end the reply keeps only whitespace, end-of-turn tokens or other kept calls
  // after it.
  const kept: Extraction[] = [];
  let tail = text.length;
  let prose = proseEnd(text, 0, tail);
  for (let k = out.length - 1; k >= 0; k--) {
    const e = out[k]!;
    if (terminal[k] && prose > e.end) continue;
    kept.push(e);
    tail = e.start;
    prose = proseEnd(text, 0, tail);
  }
  return kept.reverse();
};

/**
 * After `<|python_tag|>`: a built-in tool (`brave_search.call(query="…")`), Python calls, or raw
 * code for the `python` tool (Functionary v3.1, Llama 3.1's code interpreter).
 */
function pythonTagCode(text: string, s: number): Extraction | undefined {
  const from = Math.max(0, s - 400);
  const tag = /<\|python_tag\|>\s*$/.exec(text.slice(from, s));
  if (!tag) return undefined;
  tag.index += from;
  if (/^\s*[{[]/.test(text.slice(s, s + 100))) return undefined;
  // The code runs to the end of the message, or to the next tag (a new call).
  const ends = ["<|eom_id|>", "<|eot_id|>"].map((t) => find(text, t, s)).filter((x) => x >= 0);
  const next = find(text, "<|python_tag|>", s);
  const at = Math.min(text.length, ...ends, ...(next >= 0 ? [next] : []));
  const code = text.slice(s, at).trim();
  charge(at - s);
  if (!code) return undefined;
  const end = at + (ends.includes(at) ? "<|eom_id|>".length : 0);
  const py = parsePythonCalls(code) ?? parsePythonLines(code);
  // A built-in call that does not parse (cut short) is a broken call, not code to run; the tag
  // inside a sentence ("it starts with the <|python_tag|> token.") is a mention.
  if (!py && (/^[\w.]+\.call\s*\(/.test(code) || inline(text, tag.index))) return undefined;
  const calls = py
    ? py.map((c) => ({ name: c.name.replace(/\.call$/, ""), arguments: c.arguments }))
    : [{ name: "python", arguments: { code } }];
  return { start: tag.index, end, calls };
}
