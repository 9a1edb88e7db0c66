/**
 * Call objects and lists of them, as the JSON formats write them: one object in any of the common
 * key spellings, a list, or objects one per line. A list keeps its valid calls and reports each
 * entry that is not one (a broken line, no name, no arguments), so the model can be told.
 */
import { charge } from "./meter.js";
import { balancedEnd, find, jsonAt, lenientJson } from "./scan.js";
import type { RawCall, RejectedCall } from "./types.js";

/** Keys a call object's arguments go by, in the order they are looked for. */
const ARG_KEYS = ["arguments", "parameters", "args", "input"] as const;

/**
 * Reads one call object: `{"name": …, "arguments": {…}}` and its spellings (`parameters`,
 * `tool_name`, `{"function": {"name", "arguments"}}`). A name without an arguments key is not a
 * call (it is data that happens to have a name). Returns the call, or why it is not one.
 */
export function readCall(o: unknown): RawCall | string {
  if (!o || typeof o !== "object" || Array.isArray(o)) return "not a JSON object";
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
  if (typeof name !== "string" || !name) return 'no "name"';
  const holder = fn && ARG_KEYS.some((k) => k in fn) ? fn : r;
  if (holder === fn && !("arguments" in fn) && (isSchema(fn.parameters) || "description" in fn))
    return `${name} is a tool definition, not a call`;
  const key = ARG_KEYS.find((k) => k in holder);
  if (!key) return `no "arguments" for ${name}`;
  // Llama 3's call keeps its arguments in "parameters", as a definition keeps its schema there.
  const p = holder[key] as Record<string, unknown> | null;
  if (
    holder === r &&
    key === "parameters" &&
    ("description" in r || (p?.type === "object" && typeof p.properties === "object"))
  )
    return `${name} is a tool definition, not a call`;
  let args: unknown = holder[key] ?? {};
  if (typeof args === "string") args = args.trim() ? lenientJson(args) : {};
  if (!args || typeof args !== "object" || Array.isArray(args))
    return `the arguments of ${name} are not a JSON object`;
  return { name, arguments: args };
}

/** A JSON schema of an object (what a tool definition's `parameters` holds). */
function isSchema(v: unknown): boolean {
  const s = v as Record<string, unknown> | null;
  return Boolean(s && typeof s === "object" && (s.type === "object" || s.properties));
}

/** One call object, or undefined when it is not a call. */
export function callFromObject(o: unknown): RawCall | undefined {
  const c = readCall(o);
  return typeof c === "string" ? undefined : c;
}

/** The entries of a value: a list's, a `{"tool_calls": […]}` wrapper's (xLAM), or the value itself. */
function listOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value as unknown[];
  const wrapped = (value as { tool_calls?: unknown } | null)?.tool_calls;
  return Array.isArray(wrapped) ? (wrapped as unknown[]) : [value];
}

/** Calls from a parsed JSON value: one object or an array of them; undefined if any is not a call. */
export function callsFromJson(value: unknown): RawCall[] | undefined {
  const list = listOf(value);
  const calls = list.map(callFromObject);
  return calls.length > 0 && calls.every((c): c is RawCall => c !== undefined) ? calls : undefined;
}

/** An entry as the model wrote it, short enough to quote back. */
export function quote(v: unknown): string {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

export interface Entries {
  calls: RawCall[];
  rejected: RejectedCall[];
}

/** The calls of parsed JSON values (objects or lists of them); every other entry is rejected. */
export function splitEntries(values: unknown[], broken: string[] = []): Entries {
  const calls: RawCall[] = [];
  const rejected: RejectedCall[] = broken.map((text) => ({
    text: quote(text),
    reason: "not valid JSON",
  }));
  for (const v of values.flatMap(listOf)) {
    const c = readCall(v);
    if (typeof c === "string") rejected.push({ text: quote(v), reason: c });
    else calls.push(c);
  }
  return { calls, rejected };
}

/**
 * Every JSON value in `body`, one after another (a list, or objects one per line, separated by
 * whitespace, commas or semicolons). A value that does not parse is skipped to the end of its line
 * and returned in `broken`, so the lines after it are still read; a list that does not parse is
 * read entry by entry. `stop(p)`: where the next block of the same markup opens at or after `p`;
 * reading ends there unless a value runs over it (markup inside a value is the value's). `end`:
 * where reading ended.
 */
export function jsonValues(
  body: string,
  from = 0,
  to = body.length,
  stop: (at: number) => number = () => Infinity,
): { values: unknown[]; broken: string[]; end: number } {
  const values: unknown[] = [];
  const broken: string[] = [];
  let i = from;
  let list = false;
  for (;;) {
    const boundary = i;
    while (i < to && (list ? /[\s,;\]]/ : /[\s,;]/).test(body[i]!)) i++;
    charge(i - boundary + 1);
    const cut = stop(boundary);
    if (cut <= i && cut < to) return { values, broken, end: cut };
    if (i >= to) return { values, broken, end: to };
    const found = jsonAt(body, i);
    const json = found && found.end <= to ? found : undefined;
    if (json) {
      values.push(json.value);
      i = json.end;
      continue;
    }
    if (body[i] === "[" && !list) {
      // A list with a broken entry: read its entries one by one.
      list = true;
      i++;
      continue;
    }
    const close = balancedEnd(body, i);
    const eol = find(body, "\n", i);
    const next = Math.min(to, close > 0 ? close : eol < 0 ? to : eol, Math.max(i + 1, stop(i + 1)));
    broken.push(body.slice(i, next).trim());
    charge(next - i);
    i = next;
  }
}

/**
 * Every call in a body of JSON values (a list, or objects one per line), `body` or its part from
 * `from` to `to`; the rest is rejected.
 */
export function jsonEntries(
  body: string,
  from?: number,
  to?: number,
  stop?: (at: number) => number,
): Entries & { end: number } {
  const { values, broken, end } = jsonValues(body, from, to, stop);
  return { ...splitEntries(values, broken), end };
}
