/**
 * `parseToolCalls`: finds the tool calls a model wrote as text, in any of the formats of the model
 * families people run locally, and returns them with the remaining text. Thinking blocks are never
 * parsed; malformed markup stays in the content and is described in `problem`; nothing throws.
 */
import {
  commandRFormat,
  deepseekFormat,
  functionaryFormat,
  graniteFormat,
  harmonyFormat,
  hermesFormat,
  kimiFormat,
  llamaJsonFormat,
  mistralFormat,
  phiFormat,
} from "./json-formats.js";
import { lenientJson } from "./scan.js";
import {
  gemmaFormat,
  glmFormat,
  lfm2Format,
  pythonicFormat,
  qwen3CoderFormat,
} from "./text-formats.js";
import type {
  ArgSchemas,
  Extraction,
  Extractor,
  FormatName,
  ParseOptions,
  ParseResult,
  ParsedCall,
  RawCall,
} from "./types.js";

/** Each format's marker and reader, in the order `auto` tries them (most specific first). */
const FORMATS: Array<[FormatName, RegExp, Extractor]> = [
  ["deepseek", /<｜tool▁calls▁begin｜>/, deepseekFormat],
  ["kimi-k2", /<\|tool_calls_section_begin\|>/, kimiFormat],
  ["harmony", /to=functions\.[\w.-]+/, harmonyFormat],
  ["lfm2", /<\|tool_call_start\|>/, lfm2Format],
  ["granite", /<\|tool_call\|>/, graniteFormat],
  ["mistral", /\[TOOL_CALLS\]/, mistralFormat],
  ["phi4-mini", /functools\s*\[/, phiFormat],
  ["command-r", /<\|START_ACTION\|>|Action:\s*```/, commandRFormat],
  ["qwen3-coder", /<function=[\w.-]+>(?!\s*\{)/, qwen3CoderFormat],
  ["functionary", /<function=[\w.-]+>\s*\{|>>>\s*[\w.-]+\s*\n/, functionaryFormat],
  ["glm-4.5", /<tool_call>\s*[\w.-]+\s*(<arg_key>|<\/tool_call>)/, glmFormat],
  ["hermes", /<tool_call>/, hermesFormat],
  ["gemma", /call:[\w.-]+\s*\{|```tool_code/, gemmaFormat],
  ["pythonic", /\[[A-Za-z_][\w.-]*\(|<\|python_start\|>/, pythonicFormat],
  ["llama3-json", /\{\s*"(name|tool|tool_name|function)"\s*:|<\|python_tag\|>/, llamaJsonFormat],
];

/** Reasoning is not action: blank out thinking so no call inside it is read (offsets stay valid). */
const THINKING = [
  /<think>[\s\S]*?(<\/think>|$)/g,
  /\[THINK\][\s\S]*?(\[\/THINK\]|$)/g,
  /◁think▷[\s\S]*?(◁\/think▷|$)/g,
  /<\|channel\|>analysis<\|message\|>[\s\S]*?(<\|end\|>|$)/g,
];

function maskThinking(text: string): string {
  let masked = text;
  for (const re of THINKING) masked = masked.replace(re, (m) => " ".repeat(m.length));
  return masked;
}

function typeOf(schemas: ArgSchemas | undefined, tool: string, key: string): string | undefined {
  const t = schemas?.[tool]?.properties?.[key]?.type;
  return Array.isArray(t) ? t.find((x) => x !== "null") : t;
}

/** Coerces text values by the tool's schema: "5" → 5 for a number, "true" → true, JSON for objects. */
function coerce(call: RawCall, schemas?: ArgSchemas): ParsedCall {
  const args = call.arguments as Record<string, unknown>;
  if (!call.textValues) return { name: call.name, arguments: args };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    const type = typeOf(schemas, call.name, k);
    if (typeof v !== "string" || type === "string") out[k] = v;
    else if ((type === "number" || type === "integer") && /^-?\d+(\.\d+)?$/.test(v.trim()))
      out[k] = Number(v);
    else if (type === "boolean" && /^(true|false)$/i.test(v.trim()))
      out[k] = v.trim().toLowerCase() === "true";
    else if (type === "object" || type === "array") out[k] = lenientJson(v) ?? v;
    else out[k] = v;
  }
  return { name: call.name, arguments: out };
}

/**
 * Parses tool calls out of model text.
 *
 * @returns the calls (arguments keep their JSON types; XML-style values are coerced by schema),
 *   the text without the call markup, the format, and a `problem` when markup holds no valid call.
 */
export function parseToolCalls(text: string, options: ParseOptions = {}): ParseResult {
  if (typeof text !== "string" || text === "") return { calls: [], content: "" };
  const masked = maskThinking(text);
  const allowed = options.toolNames ? new Set(options.toolNames) : undefined;
  const ctx = { salvage: Boolean(allowed) };
  const candidates =
    options.format && options.format !== "auto"
      ? FORMATS.filter(([name]) => name === options.format)
      : FORMATS.filter(([, marker]) => marker.test(masked));

  const kept: Array<Extraction & { format: FormatName }> = [];
  let problem: { format: FormatName; text: string } | undefined;
  for (const [format, , extract] of candidates) {
    let found: Extraction[];
    try {
      found = extract(masked, ctx);
    } catch {
      continue; // a reader bug must not break a run; the text stays content
    }
    for (const e of found) {
      if (kept.some((k) => e.start < k.end && k.start < e.end)) continue;
      const calls = e.calls.filter((c) => !allowed || allowed.has(c.name));
      if (e.problem) {
        problem ??= { format, text: e.problem };
        continue;
      }
      if (e.calls.length > 0 && calls.length === 0) continue; // calls to tools not offered stay text
      kept.push({ ...e, calls, format });
    }
  }
  kept.sort((a, b) => a.start - b.start);
  const calls = kept.flatMap((e) => e.calls.map((c) => coerce(c, options.schemas)));
  let content = "";
  let at = 0;
  for (const e of kept) {
    content += text.slice(at, e.start);
    at = e.end;
  }
  content = (content + text.slice(at)).trim();
  const format =
    kept.find((e) => e.calls.length)?.format ?? (calls.length ? undefined : problem?.format);
  return {
    calls,
    content,
    ...(format ? { format } : {}),
    ...(calls.length === 0 && problem ? { problem: problem.text } : {}),
  };
}
