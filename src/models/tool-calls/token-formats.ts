/**
 * Formats built on a model's special tokens, with JSON arguments: DeepSeek V3/R1/V3.1, Kimi K2 and
 * gpt-oss harmony. Each extractor returns the spans it claims; a span with markup but no valid call
 * carries a `problem`.
 */
import { charge, scanAll } from "./meter.js";
import { find, jsonAt, lenientJson } from "./scan.js";
import { quote } from "./entries.js";
import { dsmlFormat, invokes } from "./tag-formats.js";
import type { Extraction, Extractor, RawCall, RejectedCall } from "./types.js";

/**
 * DeepSeek's special tokens, with full-width or ASCII bars, and `▁` also written `_`, ` ` or `\_`
 * (R1 distills are unsure of their opening marker; llama.cpp accepts the same variants).
 */
const ds = (word: string) => `<[｜|]${word.split("_").join("(?:▁|_| |\\\\_)")}[｜|]>`;
const DS_OPEN = `(?:${ds("tool_calls_begin")}|${ds("tool_calls")})`;
const DS_SECTION = new RegExp(`${DS_OPEN}([\\s\\S]*?)(${ds("tool_calls_end")}|$)`, "g");
const DS_CALL_BEGIN = ds("tool_call_begin");
const DS_CALL = new RegExp(
  `${DS_CALL_BEGIN}([\\s\\S]*?)(${ds("tool_call_end")}|(?=${DS_CALL_BEGIN})|$)`,
  "g",
);
const DS_SPLIT = new RegExp(`${DS_CALL_BEGIN}|${ds("tool_call_end")}`);
const DS_SEP = ds("tool_sep");
const DS_V3 = new RegExp(
  `^\\s*function\\s*${DS_SEP}\\s*([^\\s\`<]+)\\s*\`\`\`(?:json)?\\s*([\\s\\S]*?)\`\`\``,
);
const DS_V31 = new RegExp(
  `^\\s*(?:function\\s*${DS_SEP})?\\s*([^\\s<]+?)\\s*${DS_SEP}\\s*([\\s\\S]*)$`,
);
const DS_V3_BARE = new RegExp(`^\\s*function\\s*${DS_SEP}\\s*([^\\s<{]+)\\s*\\n\\s*([\\s\\S]*)$`);

/** The calls of a DeepSeek section body (or of one call); each piece that is not a call is rejected. */
function deepseekCalls(section: string): { calls: RawCall[]; rejected: RejectedCall[] } {
  const calls: RawCall[] = [];
  const rejected: RejectedCall[] = [];
  for (const piece of section.split(DS_SPLIT)) {
    if (!piece.trim()) continue;
    // Step3 writes `function<｜tool_sep｜><steptml:invoke name="f">…` inside the same markers.
    // (only closed invokes: the piece may run to the end of a reply cut short)
    const xml = /invoke\s+name\s*=/.test(piece) ? invokes(piece, true) : undefined;
    if (xml) {
      calls.push(...xml);
      continue;
    }
    const hit = DS_V3.exec(piece) ?? DS_V3_BARE.exec(piece) ?? DS_V31.exec(piece);
    const body = hit?.[2]!.replace(/^```(?:json)?\s*/, "").replace(/```\s*$/, "");
    const args = body === undefined ? undefined : lenientJson(body);
    if (hit && args && typeof args === "object" && !Array.isArray(args))
      calls.push({ name: hit[1]!, arguments: args });
    else
      rejected.push({
        text: quote(piece.trim()),
        reason: "a DeepSeek tool call needs name<｜tool▁sep｜>{JSON arguments}",
      });
  }
  return { calls, rejected };
}

/**
 * DeepSeek V3/R1 (`function<｜tool▁sep｜>name` + fenced JSON) and V3.1 (`name<｜tool▁sep｜>{json}`),
 * in a `<｜tool▁calls▁begin｜>` section (or R1's short `<｜tool▁calls｜>`), the per-call markers
 * optional inside it; and V3.2/V4's DSML invokes.
 */
export const deepseekFormat: Extractor = (text, ctx) => {
  const out: Extraction[] = [];
  const span = (m: RegExpMatchArray & { index: number }, body: string, empty: string) => {
    const { calls, rejected } = deepseekCalls(body);
    out.push({
      start: m.index,
      end: m.index + m[0].length,
      calls,
      ...(calls.length ? {} : { problem: rejected[0]?.reason ?? empty }),
      ...(calls.length && rejected.length ? { rejected } : {}),
    });
  };
  for (const m of scanAll(DS_SECTION, text)) span(m, m[1]!, "empty tool-call section");
  if (text.includes("DSML")) out.push(...dsmlFormat(text, ctx));
  // Calls without the section around them (a reply cut short, or a model that skips it).
  if (!out.length) for (const m of scanAll(DS_CALL, text)) span(m, m[1]!, "empty tool call");
  return out;
};

const KIMI_SECTION = /<\|tool_calls?_section_begin\|>([\s\S]*?)(<\|tool_calls?_section_end\|>|$)/g;
const KIMI_BEGIN = "<|tool_call_begin|>";
const KIMI_ARGS = "<|tool_call_argument_begin|>";
/** A call id: `functions.name:0` (MLX servers also write other prefixes, or none). */
const KIMI_ID = /^(?:[^.\s:]+\.)?(.+):\d+$/u;

/** The call id written just before `at` (after `from`), and where its call starts. */
function kimiId(text: string, from: number, at: number): { id: string; start: number } {
  let i = at;
  while (i > from && /\s/.test(text[i - 1]!)) i--;
  const idEnd = i;
  while (i > from && !/[\s<>]/.test(text[i - 1]!)) i--;
  const id = text.slice(i, idEnd);
  while (i > from && /\s/.test(text[i - 1]!)) i--;
  const begin = i - KIMI_BEGIN.length;
  return { id, start: begin >= from && text.startsWith(KIMI_BEGIN, begin) ? begin : i };
}

/** The Kimi calls in `text` from `from` to `to`, with their spans. */
function kimiCalls(text: string, from: number, to: number) {
  const found: Array<{ start: number; end: number; call?: RawCall; rejected?: RejectedCall }> = [];
  let after = from;
  for (let a = find(text, KIMI_ARGS, from); a >= 0 && a < to; a = find(text, KIMI_ARGS, after)) {
    const { id: raw, start } = kimiId(text, after, a);
    const at = a + KIMI_ARGS.length;
    const next = text.slice(at, to).search(/<\|tool_call_(?:end|begin|argument_begin)\|>/);
    charge(next < 0 ? to - at : next + 1);
    const until = next < 0 ? to : at + next;
    const json = jsonAt(text, at);
    const inside = json !== undefined && json.end <= until;
    const args = inside ? json.value : lenientJson(text.slice(at, until));
    const close = text.startsWith("<|tool_call_end|>", until) ? "<|tool_call_end|>".length : 0;
    const end = until + close;
    after = end;
    const id = KIMI_ID.exec(raw);
    if (id && args && typeof args === "object" && !Array.isArray(args))
      found.push({ start, end, call: { name: id[1]!, arguments: args } });
    else
      found.push({
        start,
        end,
        rejected: {
          text: quote(text.slice(start, end)),
          reason: id
            ? `the arguments of ${id[1]} are not a JSON object`
            : `a Kimi call id must be functions.name:index, got ${JSON.stringify(raw)}`,
        },
      });
  }
  return found;
}

/**
 * Kimi K2: `<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{json}<|tool_call_end|>`
 * inside a `<|tool_calls_section_begin|>` section, and the variations MLX servers pass on: the
 * section marker singular, the per-call begin marker missing, no section at all, whitespace between
 * the markers, Python-literal arguments. A call id must end in `:index`; one that does not is
 * rejected.
 */
export const kimiFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  for (const m of scanAll(KIMI_SECTION, text)) {
    const found = kimiCalls(text, m.index, m.index + m[0].length);
    const calls = found.flatMap((f) => (f.call ? [f.call] : []));
    const rejected = found.flatMap((f) => (f.rejected ? [f.rejected] : []));
    out.push({
      start: m.index,
      end: m.index + m[0].length,
      calls,
      ...(calls.length
        ? rejected.length
          ? { rejected }
          : {}
        : { problem: rejected[0]?.reason ?? "the Kimi tool-call section holds no valid call" }),
    });
  }
  if (!out.length)
    for (const f of kimiCalls(text, 0, text.length))
      if (f.call) out.push({ start: f.start, end: f.end, calls: [f.call] });
  return out;
};

/** gpt-oss harmony: `<|channel|>commentary to=functions.name <|constrain|>json<|message|>{json}<|call|>`. */
export const harmonyFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  // The recipient is in the channel header or in the role header, on any channel (models put
  // calls on analysis too); `functions.` is sometimes left out.
  const re =
    /(?:<\|start\|>assistant)?(?:<\|channel\|>\w+\s+to=(?:functions\.)?([^\s<]+)|(?<!\s)\s*to=(?:functions\.)?([^\s<=]+)\s*<\|channel\|>\w+)[^<]*(?:<\|constrain\|>\s*\w*\s*)?<\|message\|>/gu;
  for (const m of scanAll(re, text)) {
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
