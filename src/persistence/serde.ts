/**
 * LangGraph's JSON serializer with a faster way back for chat messages, the bulk of a thread: a
 * value is revived synchronously, a message built directly by its class, where LangGraph's reviver
 * awaits every node of the value and sends each message through `load()` (re-serialised, its class
 * looked up by import path). Anything else LangChain-serialised (secrets, escaped objects, other
 * classes, `lc: 2` records other than `undefined` and delta snapshots) goes to LangGraph's own
 * reviver, whole.
 *
 * Writing is LangGraph's own, but for the fields LangChain writes into every message even when
 * empty and its constructors give back as they were (`additional_kwargs: {}`, `response_metadata:
 * {}`, `invalid_tool_calls: []`): left out, ~90 bytes a reading turn, in every write and snapshot.
 * Either reviver reads the result.
 */
import {
  AIMessage,
  AIMessageChunk,
  BaseMessage,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { DeltaSnapshot, JsonPlusSerializer } from "@langchain/langgraph-checkpoint";

/** The message classes revived directly, by their serialised name. */
const MESSAGES: Record<string, new (fields: Record<string, unknown>) => unknown> = {
  AIMessage,
  AIMessageChunk,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
} as never;

/** Thrown inside `revive` for a value the fast way does not handle. */
class Handoff extends Error {}
const HANDOFF = new Handoff("handed to LangGraph's reviver");

/** A serialised key as LangChain's `load()` maps it (snake_case to camelCase, then the class's aliases). */
const camel = (key: string) =>
  /[-_\s]/.test(key.trim())
    ? key
        .trim()
        .replace(/[-_\s]+/g, "_")
        .toLowerCase()
        .replace(/_+([a-z0-9])/g, (_, c: string) => c.toUpperCase())
    : key.trim();

const aliasCache = new Map<unknown, Record<string, string>>();
/** A class's `lc_aliases` inverted (serialised name → field), as `load()` builds them. */
function aliasesOf(cls: { prototype: unknown }): Record<string, string> {
  let out = aliasCache.get(cls);
  if (out) return out;
  const aliases: Record<string, string> = {};
  for (let c = cls; c && c.prototype; c = Object.getPrototypeOf(c) as typeof cls)
    Object.assign(aliases, Reflect.get(c.prototype, "lc_aliases"));
  out = Object.fromEntries(Object.entries(aliases).map(([k, v]) => [v, k]));
  aliasCache.set(cls, out);
  return out;
}

/** Whether a parsed value holds anything LangChain-serialised (then it is not plain data). */
function plain(value: unknown): boolean {
  if (value === null || typeof value !== "object") return true;
  if (Array.isArray(value)) return value.every(plain);
  if ("lc" in value || "__lc_escaped__" in value) return false;
  return Object.values(value).every(plain);
}

/** The value `JSON.parse` made, revived in place (it is nobody else's). */
function revive(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = revive(value[i]);
    return value;
  }
  const record = value as Record<string, unknown>;
  if (record.lc === 2 && record.type === "undefined") return undefined;
  if (record.lc === 2 && record.type === "delta_snapshot" && "value" in record)
    return new DeltaSnapshot(revive(record.value));
  if (record.lc === 1 && record.type === "constructor" && Array.isArray(record.id)) {
    const id = record.id as string[];
    const cls =
      id.length === 3 && id[0] === "langchain_core" && id[1] === "messages" && MESSAGES[id[2]!];
    const kwargs = record.kwargs as Record<string, unknown> | undefined;
    if (!cls || !kwargs || typeof kwargs !== "object" || !plain(kwargs)) throw HANDOFF;
    const aliases = aliasesOf(cls);
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(kwargs)) fields[aliases[k] ?? camel(k)] = v;
    return new cls(fields);
  }
  if ("lc" in record || "__lc_escaped__" in record) throw HANDOFF;
  for (const k in record) record[k] = revive(record[k]);
  return record;
}

const decoder = new TextDecoder();

/** Message fields LangChain serialises even when empty, which the message constructors default. */
const EMPTY_DEFAULTS = ["additional_kwargs", "response_metadata", "invalid_tool_calls"] as const;

const isEmpty = (v: unknown) =>
  Array.isArray(v) ? v.length === 0 : !!v && typeof v === "object" && Object.keys(v).length === 0;

/** A message as LangChain serialises it, without its empty defaulted fields. */
function compactMessage(m: BaseMessage): unknown {
  const json = m.toJSON() as { type: string; kwargs?: Record<string, unknown> };
  if (json.type !== "constructor" || !json.kwargs) return json;
  const kwargs = { ...json.kwargs };
  for (const k of EMPTY_DEFAULTS) if (isEmpty(kwargs[k])) delete kwargs[k];
  return { ...json, kwargs };
}

/**
 * A value to write with its messages compacted: a message, a list of them (a write), or a delta
 * snapshot of the conversation; anything else as it is.
 */
function compact(value: unknown): unknown {
  if (BaseMessage.isInstance(value)) return compactMessage(value);
  if (Array.isArray(value))
    return value.some((v) => BaseMessage.isInstance(v)) ? value.map(compact) : value;
  if (value instanceof DeltaSnapshot) return new DeltaSnapshot(compact(value.value));
  return value;
}

/** JsonPlusSerializer, reviving messages and plain data synchronously (see the module comment). */
export class KeelSerializer extends JsonPlusSerializer {
  protected override _dumps(obj: unknown): Uint8Array {
    return super._dumps(compact(obj));
  }

  override async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    if (type !== "json") return super.loadsTyped(type, data);
    const text = typeof data === "string" ? data : decoder.decode(data);
    try {
      return revive(JSON.parse(text));
    } catch (err) {
      if (err === HANDOFF) return super.loadsTyped(type, text);
      throw err;
    }
  }
}
