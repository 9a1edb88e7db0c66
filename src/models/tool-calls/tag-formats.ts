/**
 * Families whose calls sit inside their own tags: OLMo 3 (`<function_calls>` with Python calls),
 * Nemotron (`<TOOLCALL>`), MiniMax M1 / Hunyuan / Jamba (`<tool_calls>` with JSON), MiniMax M2
 * (`<minimax:tool_call>` XML), InternLM2 (`<|action_start|><|plugin|>`), Granite 20B FC
 * (`<function_call>`), Apertus (`<|tools_prefix|>`). Formats learnt from the models' chat templates
 * and model cards, and SGLang's function-call detectors.
 */
import { jsonEntries, readCall, splitEntries, type Entries } from "./entries.js";
import { charge, scanAll } from "./meter.js";
import { find, findRe, jsonAt, lenientJson, parsePythonLines, XML_NAME } from "./scan.js";
import type { Extraction, Extractor, RawCall } from "./types.js";

/**
 * Spans `open … close`; each body read by `read`. A block without its close before the next block
 * of the same markup opens ends there (the reply was cut inside it, or the model began again), and
 * an unclosed last one runs to the end: each part of the text is read by one block. `read` gets
 * `stop(p)`, where the next block opens from `p` on; a JSON reader reads on past it inside a value
 * (markup inside a value is the value's) and says where it ended.
 */
function tagged(
  open: RegExp,
  close: string | RegExp,
  /** Reads the body, `text` from `from` to `to` (offsets, so failed JSON is not re-tried). */
  read: (
    text: string,
    from: number,
    to: number,
    stop: (at: number) => number,
  ) => RawCall[] | (Entries & { end?: number }) | undefined,
  problem: string,
): Extractor {
  return (text) => {
    const out: Extraction[] = [];
    const opens = [...scanAll(open, text)];
    const starts = opens.map((m) => m.index);
    let k = 0;
    const stop = (at: number) => {
      while (k < starts.length && starts[k]! < at) k++;
      return starts[k] ?? Infinity;
    };
    let after = 0;
    for (const [i, m] of opens.entries()) {
      if (m.index < after) continue; // inside a value of the block before
      const from = m.index + m[0].length;
      const next = starts[i + 1] ?? text.length;
      const found =
        typeof close === "string"
          ? { at: find(text, close, from), length: close.length }
          : findRe(text, close, from);
      const at = found.at;
      const to = at < 0 ? text.length : at;
      k = i + 1;
      const got = read(text, from, to, stop);
      const { calls, rejected } = Array.isArray(got)
        ? { calls: got, rejected: [] }
        : (got ?? { calls: [], rejected: [] });
      const stopped = Array.isArray(got) || got?.end === undefined ? Math.min(to, next) : got.end;
      const end = stopped < to ? stopped : at < 0 ? text.length : at + found.length;
      after = end;
      out.push(
        calls.length
          ? { start: m.index, end, calls, ...(rejected.length ? { rejected } : {}) }
          : {
              start: m.index,
              end,
              calls: [],
              problem: rejected.length ? `${problem} (${rejected[0]!.reason})` : problem,
            },
      );
    }
    return out;
  };
}

const jsonCalls = (text: string, from: number, to: number, stop: (at: number) => number) =>
  jsonEntries(text, from, to, stop);

/** A reader of the body up to where the next block opens (`read` takes the text of it). */
const upToNext =
  (read: (body: string, cut: boolean) => RawCall[] | undefined) =>
  (text: string, from: number, to: number, stop: (at: number) => number) => {
    const end = Math.min(to, stop(from));
    charge(end - from);
    return read(text.slice(from, end), end < to || to === text.length);
  };

/** OLMo 3: `<function_calls>\nf(a=1)\ng(b="x")\n</function_calls>`. */
export const olmo3Format = tagged(
  /<function_calls>/g,
  "</function_calls>",
  upToNext((body) => parsePythonLines(body)),
  '<function_calls> must hold one call per line, like get_weather(city="Paris")',
);

/**
 * Nemotron (v1, v2 Nano): `<TOOLCALL>[{"name": …, "arguments": {…}}]</TOOLCALL>`; Nemotron-Mini
 * writes the tags in lower case around one object.
 */
export const nemotronFormat = tagged(
  /<TOOLCALL>/gi,
  /<\/TOOLCALL>/i,
  jsonCalls,
  '<TOOLCALL> must hold a JSON list like [{"name": …, "arguments": {…}}]',
);

/** MiniMax M1 (JSON objects one per line), Hunyuan and Jamba (a JSON list): `<tool_calls>…</tool_calls>`. */
export const toolCallsBlockFormat = tagged(
  /<tool_calls>/g,
  "</tool_calls>",
  jsonCalls,
  '<tool_calls> must hold calls like {"name": …, "arguments": {…}}',
);

/**
 * Granite 20B FC: `<function_call> {"name": …, "arguments": {…}}`, repeated for several calls (a
 * closing `</function_call>`, which models drifting from Hermes write, is part of it).
 */
export const granite20bFormat: Extractor = (text) => {
  const out: Extraction[] = [];
  let after = 0;
  for (const m of scanAll(/<function_call>/g, text)) {
    if (m.index < after) continue; // inside the JSON of the call before
    const json = jsonAt(text, m.index + m[0].length);
    const { calls, rejected } = json ? splitEntries([json.value]) : { calls: [], rejected: [] };
    const close = json ? /^\s*<\/function_call>/.exec(text.slice(json.end)) : null;
    if (calls.length) after = json!.end;
    out.push(
      calls.length
        ? {
            start: m.index,
            end: json!.end + (close?.[0].length ?? 0),
            calls,
            ...(rejected.length ? { rejected } : {}),
          }
        : {
            start: m.index,
            end: m.index + m[0].length,
            calls: [],
            problem: '<function_call> must be followed by {"name": …, "arguments": {…}}',
          },
    );
  }
  return out;
};

/** InternLM2: `<|action_start|><|plugin|>\n{"name": …, "parameters": {…}}<|action_end|>`. */
export const internlmFormat = tagged(
  /<\|action_start\|>\s*<\|plugin\|>/g,
  "<|action_end|>",
  jsonCalls,
  '<|plugin|> must hold {"name": …, "parameters": {…}}',
);

/** Apertus: `<|tools_prefix|>[{"name": {arguments}}, …]<|tools_suffix|>`. */
export const apertusFormat = tagged(
  /<\|tools_prefix\|>/g,
  "<|tools_suffix|>",
  upToNext((body) => {
    const value = lenientJson(body);
    const list = Array.isArray(value) ? value : value ? [value] : [];
    const calls = list.flatMap((o): RawCall[] => {
      if (!o || typeof o !== "object" || Array.isArray(o)) return [];
      const entries = Object.entries(o as Record<string, unknown>);
      if (entries.length !== 1) {
        const c = readCall(o);
        return typeof c === "string" ? [] : [c];
      }
      const [name, args] = entries[0]!;
      return args && typeof args === "object" && !Array.isArray(args)
        ? [{ name, arguments: args }]
        : [];
    });
    return calls.length ? calls : undefined;
  }),
  '<|tools_prefix|> must hold a JSON list like [{"get_weather": {"city": "Paris"}}]',
);

/** Unescapes the XML entities models write inside values. */
const xmlText = (v: string) =>
  v
    .replace(/^\r?\n/, "")
    .replace(/\r?\n$/, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");

/**
 * ` name="v"`, `name='v'` or `name=v` in a tag: the value in group 1, 2 or 3, the other attributes
 * in 4. No run crosses a `<`: a tag left open ends where the next one starts, so no attempt to
 * match reads on to the end of the text (each is linear, and so is the whole scan).
 */
const NAME = String.raw`\s+name\s*=\s*(?:"([^"<>]*)"|'([^'<>]*)'|([^\s"'<>]+))([^<>]*)>`;
/** A tag's namespace: `minimax:`-like, or DeepSeek's `｜DSML｜`. */
const NS = String.raw`(?:\w+:|[｜|]DSML[｜|])?`;
const INVOKE = new RegExp(String.raw`<${NS}invoke${NAME}([\s\S]*?)(?:<\/${NS}invoke>|$)`, "g");
const PARAMETER = new RegExp(
  String.raw`<${NS}parameter${NAME}([\s\S]*?)(?:<\/${NS}parameter>|(?=<${NS}parameter\s)|$)`,
  "g",
);

/**
 * The `<invoke name="f"><parameter name="k">v</parameter></invoke>` calls of a body (MiniMax M2;
 * Step3 and others write the same tags in a namespace, `<steptml:invoke …>`; DeepSeek V3.2 and V4
 * in `｜DSML｜`, with `string="false"` on a parameter whose value is JSON). `cut`: the body runs to
 * the end of the text (its wrapper was not closed).
 */
export function invokes(body: string, cut = false): RawCall[] | undefined {
  charge(2 * body.length);
  const calls: RawCall[] = [];
  let at = 0;
  for (const inv of body.matchAll(INVOKE)) {
    if (body.slice(at, inv.index).trim()) return undefined; // text between the invokes
    at = inv.index + inv[0].length;
    // In a body the text ends inside, an invoke without its close was cut: never half a call.
    if (!/invoke>$/.test(inv[0])) {
      if (cut) return calls.length ? calls : undefined;
      return undefined;
    }
    const call = invokeCall(inv);
    if (!call) return undefined;
    calls.push(call);
  }
  // after the last invoke, nothing (a cut body may end inside the next tag, not close another)
  const rest = body.slice(at).trim();
  if (rest && (!cut || rest.includes("</"))) return undefined;
  return calls.length ? calls : undefined;
}

/**
 * One invoke as a call, read strictly: a one-word name, only parameter elements inside, each
 * closed and named once. Undefined for anything else: a malformed invoke never becomes a call.
 */
function invokeCall(inv: RegExpExecArray | RegExpMatchArray): RawCall | undefined {
  const name = (inv[1] ?? inv[2] ?? inv[3]!).trim();
  if (!XML_NAME.test(name)) return undefined;
  const body = inv[5]!;
  const args: Record<string, unknown> = {};
  let at = 0;
  for (const p of body.matchAll(PARAMETER)) {
    if (body.slice(at, p.index).trim()) return undefined; // text between the parameters
    at = p.index + p[0].length;
    const key = (p[1] ?? p[2] ?? p[3]!).trim();
    if (!/parameter>$/.test(p[0]) || !XML_NAME.test(key) || key in args) return undefined;
    const value = xmlText(p[5]!);
    args[key] = /\bstring\s*=\s*["']?false/.test(p[4]!) ? (lenientJson(value) ?? value) : value;
  }
  if (body.slice(at).trim()) return undefined;
  return { name, arguments: args, textValues: true };
}

const minimaxWrapped = tagged(
  /<minimax:tool_call>/g,
  "</minimax:tool_call>",
  upToNext((body, cut) => invokes(body, cut)),
  '<minimax:tool_call> must hold <invoke name="…"><parameter name="…">value</parameter></invoke>',
);

/** DeepSeek V3.2 / V4: `<｜DSML｜function_calls>` (or `tool_calls`) around DSML invokes. */
export const dsmlFormat = tagged(
  /<[｜|]DSML[｜|](?:function_calls|tool_calls)>/g,
  /<\/[｜|]DSML[｜|](?:function_calls|tool_calls)>/,
  upToNext((body, cut) => invokes(body, cut)),
  '<｜DSML｜function_calls> must hold <｜DSML｜invoke name="…"> with <｜DSML｜parameter name="…" string="true">value</｜DSML｜parameter>',
);

/** MiniCPM5's `<function name="f"><param name="k">v</param></function>`: only params inside. */
const FUNCTION_PARAMS = new RegExp(
  String.raw`<function${NAME}(\s*(?:<param\s(?:[^<]|<(?!\/?function\b))*)?)<\/function>`,
  "g",
);
const PARAM = new RegExp(String.raw`<param${NAME}((?:[^<]|<(?!\/?param\b))*)<\/param>`, "g");
const CDATA = /^<!\[CDATA\[([\s\S]*)\]\]>$/;

/**
 * The same XML with other tag names (MiniCPM5): `<function name="f"><param name="k">v</param></function>`,
 * a value holding `<`, `&` or a newline wrapped in CDATA. Closed functions holding only params.
 */
function functionParams(text: string): Extraction[] {
  const out: Extraction[] = [];
  for (const m of scanAll(FUNCTION_PARAMS, text)) {
    const body = m[5]!;
    if (body.replace(PARAM, "").trim() !== "") continue;
    const args: Record<string, unknown> = {};
    let twice = false;
    for (const p of body.matchAll(PARAM)) {
      const cdata = CDATA.exec(p[5]!.trim());
      const key = (p[1] ?? p[2] ?? p[3]!).trim();
      twice ||= key in args || !XML_NAME.test(key);
      args[key] = cdata ? cdata[1]! : xmlText(p[5]!.trim());
    }
    const name = (m[1] ?? m[2] ?? m[3]!).trim();
    if (twice || !XML_NAME.test(name)) continue; // a parameter twice, or no name: not a call
    out.push({
      start: m.index,
      end: m.index + m[0].length,
      calls: [{ name, arguments: args, textValues: true }],
    });
  }
  return out;
}

/**
 * MiniMax M2: `<minimax:tool_call><invoke name="f"><parameter name="k">v</parameter></invoke></minimax:tool_call>`;
 * also closed invokes without a wrapper (servers that strip it), in a namespace or not; and
 * MiniCPM5's `<function name="f"><param name="k">` spelling of the same.
 */
export const minimaxM2Format: Extractor = (text, ctx) => {
  const out = minimaxWrapped(text, ctx);
  if (!out.length)
    for (const m of scanAll(
      /<(\w+:|[｜|]DSML[｜|])?invoke\s+name\s*=[^<>]*>(?:[^<]|<(?!(?:\w+:|[｜|]DSML[｜|])?invoke\s))*?<\/\1?invoke>/g,
      text,
    )) {
      const calls = invokes(m[0]);
      if (calls) out.push({ start: m.index, end: m.index + m[0].length, calls });
    }
  for (const e of functionParams(text))
    if (!out.some((o) => e.start < o.end && o.start < e.end)) out.push(e);
  return out;
};
