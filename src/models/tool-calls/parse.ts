/**
 * `parseToolCalls`: finds the tool calls a model wrote as text, in any of the formats of the model
 * families people run locally, and returns them with the remaining text. Thinking blocks are never
 * parsed; malformed markup stays in the content and is described in `problem`; nothing throws.
 */
import { capped } from "./cap.js";
import { CALL_OPENERS, FORMATS } from "./formats.js";
import { BASE_STEPS, charge, Meter, metered, STEPS_PER_CHAR, TooMuchWork } from "./meter.js";
import { maskReasoning } from "./reasoning.js";
import { forgetFailures, lenientJson } from "./scan.js";
import { Claims, CodeQuotes } from "./spans.js";
import { END_OF_TURN } from "./end-of-turn.js";
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
 * Parses tool calls out of model text, in time linear in the text (`meter.ts`): a reply whose
 * reading would cost more is not read as calls, and says so in `problem`. At most
 * `MAX_CALLS_PER_REPLY` calls are returned; the rest are in `rejected` (cap.ts).
 *
 * @returns the calls (arguments keep their JSON types; XML-style values are coerced by schema),
 *   the text without the call markup, the format, and a `problem` when markup holds no valid call.
 */
export function parseToolCalls(text: string, options: ParseOptions = {}): ParseResult {
  if (typeof text !== "string" || text === "") return { calls: [], content: "" };
  const meter = options.meter ?? new Meter();
  meter.limit = meter.steps + BASE_STEPS + STEPS_PER_CHAR * text.length;
  // Readers try JSON that is not there: a failed JSON.parse then costs no stack trace.
  const traces = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return metered(meter, () => read(text, options));
  } catch (err) {
    if (!(err instanceof TooMuchWork)) throw err;
    return {
      calls: [],
      content: text.trim(),
      problem: `the reply (${text.length} characters) is too tangled to read as tool calls within keel's limit of ${STEPS_PER_CHAR} steps a character; write fewer, simpler calls`,
    };
  } finally {
    Error.stackTraceLimit = traces;
  }
}

function read(text: string, options: ParseOptions): ParseResult {
  forgetFailures();
  // Reasoning is not action: no call inside it is read (offsets stay valid).
  charge(2 * text.length);
  const masked = maskReasoning(text, CALL_OPENERS);
  const allowed = options.toolNames ? new Set(options.toolNames) : undefined;
  const ctx = { salvage: Boolean(allowed) };
  const candidates =
    options.format && options.format !== "auto"
      ? FORMATS.filter((f) => f.name === options.format)
      : FORMATS.filter((f) => (charge(masked.length), f.marker.test(masked)));

  const kept: Array<Extraction & { format: FormatName }> = [];
  const claims = new Claims(masked.length);
  let problem: { format: FormatName; text: string } | undefined;
  const ran = new Set<Extractor>();
  for (const { name: format, extract } of candidates) {
    // Families that share a reader (Hunyuan, Jamba, MiniMax M1; Gemma and Gemma 4) read once.
    if (ran.has(extract)) continue;
    ran.add(extract);
    let found: Extraction[];
    try {
      found = extract(masked, ctx);
    } catch (err) {
      if (err instanceof TooMuchWork) throw err;
      continue; // a reader bug must not break a run; the text stays content
    }
    for (const e of found) {
      if (claims.overlaps(e.start, e.end)) continue;
      const calls = allowed ? offered(e.calls, allowed) : e.calls;
      if (e.problem) {
        problem ??= { format, text: e.problem };
        continue;
      }
      if (e.calls.length > 0 && calls.length === 0) continue; // calls to tools not offered stay text
      kept.push({ ...e, calls, format });
      claims.claim(e.start, e.end);
    }
  }
  kept.sort((a, b) => a.start - b.start);
  // Markup quoted as code is an example (dropped together: one fence may quote several calls).
  const quotes = new CodeQuotes(masked, kept);
  const examples = new Set(kept.filter((e) => quotes.quoted(e)));
  const calls = kept
    .filter((e) => !examples.has(e))
    .flatMap((e) => e.calls.map((c) => coerce(c, options.schemas)));
  let content = "";
  let at = 0;
  for (const e of kept) {
    if (examples.has(e)) continue;
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
  const read = kept.filter((e) => !examples.has(e));
  const { run, over } = capped(calls);
  const rejected = [...read.flatMap((e) => e.rejected ?? []), ...over];
  const format =
    read.find((e) => e.calls.length)?.format ?? (calls.length ? undefined : problem?.format);
  return {
    calls: run,
    content,
    ...(format ? { format } : {}),
    ...(calls.length === 0 && problem ? { problem: problem.text } : {}),
    ...(rejected.length ? { rejected } : {}),
  };
}

/** Tags and fences that wrapped a call another reader took from inside them, now empty. */
const EMPTY_WRAPPER =
  /<(tool_calls?|json|xml|function_calls?|tools?)>\s*<\/\1>|```[\w-]*[ \t]*\n?\s*```/gi;

/**
 * Content without the wrappers its calls left empty (`<tool_call><json>…</json></tool_call>`):
 * nested at most a few deep, as models write them (each pass reads the whole content).
 */
function withoutEmptyWrappers(content: string): string {
  for (let pass = 0; pass < 4; pass++) {
    charge(content.length);
    const before = content;
    content = content.replace(EMPTY_WRAPPER, "").trim();
    if (content === before) break;
  }
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
    ...t.matchAll(/<parameter=([^<>\n]+)>([\s\S]*?)(?:<\/parameter>|(?=<parameter=)|$)/gu),
    ...t.matchAll(
      /<parameter\s+name\s*=\s*["']?([^"'<>]+?)["']?\s*>([\s\S]*?)(?:<\/parameter>|$)/gu,
    ),
    ...t.matchAll(
      /<arg_key>((?:[^<]|<(?!\/?arg_(?:key|value)>))*)<\/arg_key>\s*<arg_value>([\s\S]*?)(?:<\/arg_value>|$)/gu,
    ),
  ];
  for (const p of pairs) args[p[1]!.trim()] = p[2]!.replace(/^\r?\n/, "").replace(/\r?\n$/, "");
  if (pairs.length) return coerce({ name, arguments: args, textValues: true }, schemas).arguments;
  const call = parseToolCalls(t, { schemas }).calls.find((c) => c.name === name);
  return call?.arguments;
}
