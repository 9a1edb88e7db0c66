/**
 * Formats built on a model's special tokens, with JSON arguments: DeepSeek V3/R1/V3.1, Kimi K2 and
 * gpt-oss harmony. Each extractor returns the spans it claims; a span with markup but no valid call
 * carries a `problem`.
 */
import { jsonAt, lenientJson } from "./scan.js";
import type { Extraction, Extractor, RawCall } from "./types.js";

/** DeepSeek's special tokens, with full-width or ASCII pipes (servers write both). */
const ds = (word: string) => `<[｜|]${word.replace(/_/g, "▁")}[｜|]>`;
const DS_SECTION = new RegExp(
  `${ds("tool_calls_begin")}([\\s\\S]*?)(${ds("tool_calls_end")}|$)`,
  "g",
);
const DS_CALL = new RegExp(
  `${ds("tool_call_begin")}([\\s\\S]*?)(${ds("tool_call_end")}|(?=${ds("tool_call_begin")})|$)`,
  "g",
);
const DS_SEP = ds("tool_sep");

/** DeepSeek V3/R1 (`function<｜tool▁sep｜>name` + fenced JSON) and V3.1 (`name<｜tool▁sep｜>{json}`). */
export const deepseekFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  const readCalls = (section: string) => {
    const calls: RawCall[] = [];
    let problem: string | undefined;
    for (const c of section.matchAll(DS_CALL)) {
      const body = c[1]!;
      const v3 = new RegExp(
        `^\\s*function${DS_SEP}([^\\s\`<]+)\\s*\`\`\`(?:json)?\\s*([\\s\\S]*?)\`\`\``,
      ).exec(body);
      const v31 = new RegExp(
        `^\\s*(?:function${DS_SEP})?([^\\s<]+?)\\s*${DS_SEP}\\s*([\\s\\S]*)$`,
      ).exec(body);
      const v3bare = new RegExp(`^\\s*function${DS_SEP}([^\\s<{]+)\\s*\\n\\s*([\\s\\S]*)$`).exec(
        body,
      );
      const hit = v3 ?? v31 ?? v3bare;
      const args = hit ? lenientJson(hit[2]!.replace(/```\s*$/, "").trim()) : undefined;
      if (hit && args && typeof args === "object" && !Array.isArray(args))
        calls.push({ name: hit[1]!, arguments: args });
      else problem = `a DeepSeek tool call needs name<｜tool▁sep｜>{JSON arguments}`;
    }
    return { calls, problem };
  };
  for (const m of text.matchAll(DS_SECTION)) {
    const { calls, problem } = readCalls(m[1]!);
    out.push({
      start: m.index,
      end: m.index + m[0].length,
      calls,
      ...(calls.length ? {} : { problem: problem ?? "empty tool-call section" }),
    });
  }
  // Calls without the section around them (a reply cut short, or a model that skips it).
  if (!out.length)
    for (const m of text.matchAll(DS_CALL)) {
      const { calls, problem } = readCalls(m[0]);
      out.push({
        start: m.index,
        end: m.index + m[0].length,
        calls,
        ...(calls.length ? {} : { problem: problem ?? "empty tool call" }),
      });
    }
  return out;
};

/**
 * Kimi K2: `<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{json}<|tool_call_end|>`
 * inside a section. A call id must end in `:index`; a call with any other id is skipped.
 */
export const kimiFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  const readCalls = (section: string) => {
    const calls: RawCall[] = [];
    for (const c of section.matchAll(
      /<\|tool_call_begin\|>\s*([^<]*?)\s*<\|tool_call_argument_begin\|>([\s\S]*?)(<\|tool_call_end\|>|(?=<\|tool_call_begin\|>)|$)/g,
    )) {
      const id = /^(?:functions\.)?([^\s:<]+):\d+$/u.exec(c[1]!);
      if (!id) continue;
      const args = lenientJson(c[2]!);
      if (args && typeof args === "object" && !Array.isArray(args))
        calls.push({ name: id[1]!, arguments: args });
    }
    return calls;
  };
  for (const m of text.matchAll(
    /<\|tool_calls_section_begin\|>([\s\S]*?)(<\|tool_calls_section_end\|>|$)/g,
  )) {
    const calls = readCalls(m[1]!);
    out.push({
      start: m.index,
      end: m.index + m[0].length,
      calls,
      ...(calls.length ? {} : { problem: "the Kimi tool-call section holds no valid call" }),
    });
  }
  if (!out.length)
    for (const m of text.matchAll(
      /<\|tool_call_begin\|>[\s\S]*?(<\|tool_call_end\|>|(?=<\|tool_call_begin\|>)|$)/g,
    )) {
      const calls = readCalls(m[0]);
      if (calls.length) out.push({ start: m.index, end: m.index + m[0].length, calls });
    }
  return out;
};

/** gpt-oss harmony: `<|channel|>commentary to=functions.name <|constrain|>json<|message|>{json}<|call|>`. */
export const harmonyFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  // The recipient is in the channel header or in the role header, on any channel (models put
  // calls on analysis too); `functions.` is sometimes left out.
  const re =
    /(?:<\|start\|>assistant)?(?:<\|channel\|>\w+\s+to=(?:functions\.)?([^\s<]+)|\s*to=(?:functions\.)?([^\s<]+)\s*<\|channel\|>\w+)[^<]*(?:<\|constrain\|>\s*\w*\s*)?<\|message\|>/gu;
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
