/**
 * `parseToolCalls`: finds the tool calls a model wrote as text, in any of the formats of the model
 * families people run locally, and returns them with the remaining text. Thinking blocks are never
 * parsed; malformed markup stays in the content and is described in `problem`; nothing throws.
 */
import { CALL_OPENERS, FORMATS } from "./formats.js";
import { maskReasoning } from "./reasoning.js";
import { forgetFailures, lenientJson } from "./scan.js";
import { END_OF_TURN, onlyEndOfTurn } from "./end-of-turn.js";
import type {
  ArgSchemas,
  PropertySchema,
  Extraction,
  Extractor,
  FormatName,
  ParseOptions,
  ParseResult,
  ParsedCall,
  RawCall,
} from "./types.js";

function typeOf(schemas: ArgSchemas | undefined, tool: string, key: string): string | undefined {
  const prop = schemas?.[tool]?.properties?.[key];
  // A schema without `type` still says what it holds by `items` (a list) or `properties`.
  const implied = (p: PropertySchema) =>
    p.type ?? ("items" in p ? "array" : "properties" in p ? "object" : []);
  const types = (p: PropertySchema | undefined): string[] =>
    p
      ? [
          ...[implied(p)].flat(),
          ...(p.anyOf ?? []).flatMap(types),
          ...(p.oneOf ?? []).flatMap(types),
        ]
      : [];
  const all = types(prop).filter((t) => t !== "null");
  return all.includes("string") ? "string" : all[0];
}

/** Text that may be a JSON value (anything else is not worth a parse attempt). */
const JSON_START = /^([[{"]|-?\d|(true|false|null)$)/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Coerces text values by the tool's schema: "5" → 5 for a number, "true" → true, JSON for objects.
 * In `"json"` mode (GLM) a value whose schema says nothing is read as JSON when it is JSON.
 */
function coerce(call: RawCall, schemas?: ArgSchemas): ParsedCall {
  const args = call.arguments as Record<string, unknown>;
  if (!call.textValues) return { name: call.name, arguments: args };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    const type = typeOf(schemas, call.name, k);
    const t = typeof v === "string" ? v.trim() : "";
    if (type === "string" && (typeof v === "number" || typeof v === "boolean")) out[k] = String(v);
    else if (type === undefined && call.textValues === "json" && typeof v === "string") {
      // (`null` is a value: only a failed parse keeps the text)
      const json = JSON_START.test(t) ? lenientJson(t) : undefined;
      out[k] = json === undefined ? v : json;
    } else if (typeof v !== "string" || type === "string" || type === undefined) out[k] = v;
    else if ((type === "number" || type === "integer") && NUMBER.test(t)) out[k] = Number(t);
    else if (type === "boolean" && /^(true|false)$/i.test(t)) out[k] = t.toLowerCase() === "true";
    else if (type === "null" && /^(null|none)$/i.test(t)) out[k] = null;
    else if (type === "object" || type === "array") {
      const json = lenientJson(t);
      out[k] = json === undefined ? v : json;
    } else out[k] = v;
  }
  return { name: call.name, arguments: out };
}

/** A Markdown fence line (its info string in group 1). */
const FENCE_LINE = /^[ \t]*```([\w-]*)[^\n]*$/gm;

/**
 * Whether extraction `e` is call markup quoted as code, an example rather than an action: inside an
 * inline code span (backticks around it on its line), or inside a fenced block with prose after the
 * block (not a Gemma 3 `tool_code` block, its own format). `others`: the other calls' spans, whose
 * text (a file's fences in a value) is not the reply's Markdown.
 */
function quotedAsCode(text: string, e: Extraction, others: Extraction[]): boolean {
  const lineStart = text.lastIndexOf("\n", e.start - 1) + 1;
  const lineEnd = text.indexOf("\n", e.end) < 0 ? text.length : text.indexOf("\n", e.end);
  const ticks = (s: string) => (s.replace(/```/g, "").match(/`/g) ?? []).length;
  if (ticks(text.slice(lineStart, e.start)) % 2 === 1 && ticks(text.slice(e.end, lineEnd)) > 0)
    return true;
  const outside = (from: number, to: number) =>
    others
      .filter((o) => o !== e && o.start >= from && o.end <= to)
      .reduceRight(
        (t, o) => t.slice(0, o.start - from) + t.slice(o.end - from),
        text.slice(from, to),
      );
  const fences = [...outside(0, e.start).matchAll(FENCE_LINE)];
  const own = text.startsWith("```", e.start);
  if (!own && fences.length % 2 === 0) return false;
  if ((own ? /^```([\w-]*)/.exec(text.slice(e.start)) : fences.at(-1))?.[1] === "tool_code")
    return false;
  const body = text.slice(e.start, e.end).trimEnd();
  let close = own && body.length > 3 && body.endsWith("```") ? e.end : -1;
  if (close < 0) {
    const m = /^[ \t]*```[ \t]*$/m.exec(text.slice(e.end));
    if (!m) return false; // a reply cut inside its fence
    close = e.end + m.index + m[0].length;
  }
  const rest = outside(close, text.length).replace(FENCE_LINE, "");
  return !onlyEndOfTurn(rest, 0);
}

/**
 * The calls to offered tools; a name in a namespace models are trained on (`functions.read_file` as
 * in gpt-oss's format, `default_api.read_file` as in Gemini's code-style calls) is the offered tool's.
 */
function offered(calls: RawCall[], allowed: ReadonlySet<string>): RawCall[] {
  return calls.flatMap((c) => {
    if (allowed.has(c.name)) return [c];
    const bare = c.name.replace(/^(?:functions|default_api)\./, "");
    return allowed.has(bare) ? [{ ...c, name: bare }] : [];
  });
}

/**
 * Parses tool calls out of model text.
 *
 * @returns the calls (arguments keep their JSON types; XML-style values are coerced by schema),
 *   the text without the call markup, the format, and a `problem` when markup holds no valid call.
 */
export function parseToolCalls(text: string, options: ParseOptions = {}): ParseResult {
  if (typeof text !== "string" || text === "") return { calls: [], content: "" };
  forgetFailures();
  // Reasoning is not action: no call inside it is read (offsets stay valid).
  const masked = maskReasoning(text, CALL_OPENERS);
  const allowed = options.toolNames ? new Set(options.toolNames) : undefined;
  const ctx = { salvage: Boolean(allowed) };
  const candidates =
    options.format && options.format !== "auto"
      ? FORMATS.filter((f) => f.name === options.format)
      : FORMATS.filter((f) => f.marker.test(masked));

  const kept: Array<Extraction & { format: FormatName }> = [];
  let problem: { format: FormatName; text: string } | undefined;
  const ran = new Set<Extractor>();
  for (const { name: format, extract } of candidates) {
    // Families that share a reader (Hunyuan, Jamba, MiniMax M1; Gemma and Gemma 4) read once.
    if (ran.has(extract)) continue;
    ran.add(extract);
    let found: Extraction[];
    try {
      found = extract(masked, ctx);
    } catch {
      continue; // a reader bug must not break a run; the text stays content
    }
    for (const e of found) {
      if (kept.some((k) => e.start < k.end && k.start < e.end)) continue;
      const calls = allowed ? offered(e.calls, allowed) : e.calls;
      if (e.problem) {
        problem ??= { format, text: e.problem };
        continue;
      }
      if (e.calls.length > 0 && calls.length === 0) continue; // calls to tools not offered stay text
      kept.push({ ...e, calls, format });
    }
  }
  kept.sort((a, b) => a.start - b.start);
  // Markup quoted as code is an example (dropped together: one fence may quote several calls).
  const quoted = kept.filter((e) => quotedAsCode(masked, e, kept));
  for (const e of quoted) kept.splice(kept.indexOf(e), 1);
  const calls = kept.flatMap((e) => e.calls.map((c) => coerce(c, options.schemas)));
  let content = "";
  let at = 0;
  for (const e of kept) {
    content += text.slice(at, e.start);
    at = e.end;
  }
  content = (content + text.slice(at)).trim();
  if (calls.length) {
    content = withoutEmptyWrappers(content);
    // End-of-turn tokens a server left after the calls are not text for the user.
    for (let t; (t = END_OF_TURN.find((x) => content.endsWith(x)));)
      content = content.slice(0, -t.length).trimEnd();
  }
  const rejected = kept.flatMap((e) => e.rejected ?? []);
  const format =
    kept.find((e) => e.calls.length)?.format ?? (calls.length ? undefined : problem?.format);
  return {
    calls,
    content,
    ...(format ? { format } : {}),
    ...(calls.length === 0 && problem ? { problem: problem.text } : {}),
    ...(rejected.length ? { rejected } : {}),
  };
}

/** Tags and fences that wrapped a call another reader took from inside them, now empty. */
const EMPTY_WRAPPER =
  /<(tool_calls?|json|xml|function_calls?|tools?)>\s*<\/\1>|```[\w-]*[ \t]*\n?\s*```/gi;

/** Content without the wrappers its calls left empty (`<tool_call><json>…</json></tool_call>`). */
function withoutEmptyWrappers(content: string): string {
  let before;
  do {
    before = content;
    content = content.replace(EMPTY_WRAPPER, "").trim();
  } while (content !== before);
  return content;
}

/**
 * The arguments of a call whose `function.arguments` arrived as text (OpenAI-compatible servers
 * sometimes put XML or other markup there: continue issue 11453): the one repair of arguments on
 * every provider (Ollama's wire, the OpenAI-compatible calls in act's channel). JSON first (also
 * JSON encoded twice, a string holding the object), then the parameter
 * markup of the XML-style formats, typed by the tool's schema. Undefined when nothing is readable.
 */
export function argumentsFromText(
  name: string,
  text: string,
  schemas?: ArgSchemas,
): Record<string, unknown> | undefined {
  const t = text.trim();
  if (t === "") return {};
  let json = lenientJson(t);
  // Arguments encoded twice (a JSON string holding the JSON object: vLLM's Hermes parser passes
  // such output through), or three times: unwrap while it stays JSON text.
  for (let depth = 0; depth < 3 && typeof json === "string"; depth++)
    json = lenientJson(json.trim());
  if (json && typeof json === "object" && !Array.isArray(json))
    return json as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  const pairs = [
    ...t.matchAll(/<parameter=([^>\n]+)>([\s\S]*?)(?:<\/parameter>|(?=<parameter=)|$)/gu),
    ...t.matchAll(
      /<parameter\s+name\s*=\s*["']?([^"'>]+?)["']?\s*>([\s\S]*?)(?:<\/parameter>|$)/gu,
    ),
    ...t.matchAll(/<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)(?:<\/arg_value>|$)/gu),
  ];
  for (const p of pairs) args[p[1]!.trim()] = p[2]!.replace(/^\r?\n/, "").replace(/\r?\n$/, "");
  if (pairs.length) return coerce({ name, arguments: args, textValues: true }, schemas).arguments;
  const call = parseToolCalls(t, { schemas }).calls.find((c) => c.name === name);
  return call?.arguments;
}
