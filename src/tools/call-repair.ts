/**
 * The one repair pass of a model's calls, for every channel — native or written as text, Ollama or
 * an OpenAI-compatible server — run by act on each call of a reply before the reply becomes a
 * message (so the conversation, and the server that reads it back, hold calls it can parse):
 *
 * 1. arguments that arrived as text (an OpenAI-compatible server's unparsable `arguments`, or
 *    Ollama's string the wire kept: models/reply-facts.ts) are read: JSON, JSON encoded twice,
 *    the XML-style parameters of some servers, typed by the tool's schema
 *    (models/tool-calls `argumentsFromText`). Unreadable: the call is left out;
 * 2. a foreign or mis-cased tool name is mapped to one of ours (repair.ts `repairToolName`);
 * 3. arguments the tool's schema refuses are repaired where the repair is unambiguous (aliases,
 *    "5" → 5, a JSON string for an object: repair.ts `repairArguments`) — only when the repair
 *    makes them valid.
 *
 * Steps 2 and 3 are described (`notes`): the model reads them with the call's result. Reading text
 * (1) is not a repair of the model's call, and says nothing. tool-execute then only validates.
 */
import { argumentsFromText } from "../models/tool-calls/parse.js";
import type { ArgSchemas } from "../models/tool-calls/types.js";
import { rawArguments } from "../models/reply-facts.js";
import { checkArgs, lookupTool, toolDefinition } from "./registry.js";
import { repairArguments } from "./repair.js";
import type { KeelTool } from "./types.js";

/** A call as a reply holds it: its arguments an object, or text. */
export interface RawCall {
  name: string;
  args: unknown;
  id?: string;
}

/** A call after the pass: arguments an object, and what was repaired (empty: nothing). */
export interface RepairedCall {
  name: string;
  args: Record<string, unknown>;
  id?: string;
  notes: string[];
}

/** The JSON schemas of `tools` by name, as the text readers type arguments with them. */
export const schemasOf = (tools: readonly KeelTool[]): ArgSchemas =>
  Object.fromEntries(
    tools.map((t) => [t.name, toolDefinition(t).function.parameters as ArgSchemas[string]]),
  );

/**
 * The call after the one pass (see the module comment) against the offered `tools`; undefined
 * when its arguments cannot be read. A name no repair maps to a tool stays as it is: tool-execute
 * answers it with the tools there are.
 */
export function repairCall(
  call: RawCall,
  tools: readonly KeelTool[],
  schemas: ArgSchemas = schemasOf(tools),
): RepairedCall | undefined {
  const args = readArguments(call, schemas);
  if (!args) return undefined;
  const id = call.id ? { id: call.id } : {};
  const found = lookupTool(call.name, args, tools);
  if (!found.found) return { name: call.name, args, ...id, notes: [] };
  const named = objectOf(found.args) ?? args;
  if (checkArgs(found.tool, named).ok)
    return { name: found.tool.name, args: named, ...id, notes: found.notes };
  const schema = toolDefinition(found.tool).function.parameters as Parameters<
    typeof repairArguments
  >[1];
  const repaired = repairArguments(named, schema);
  const fixed = objectOf(repaired.args);
  if (repaired.notes.length && fixed && found.tool.schema.safeParse(fixed).success)
    return {
      name: found.tool.name,
      args: fixed,
      ...id,
      notes: [...found.notes, ...repaired.notes],
    };
  return { name: found.tool.name, args: named, ...id, notes: found.notes };
}

/**
 * A call's arguments as an object: as they came, or read from their text (a value other than an
 * object is read as the JSON it is: arguments encoded as a JSON string or worse).
 */
function readArguments(call: RawCall, schemas: ArgSchemas): Record<string, unknown> | undefined {
  const object = objectOf(call.args);
  const text = object && rawArguments(call.args) === undefined ? undefined : textOf(call.args);
  if (text === undefined) return object;
  return call.name ? argumentsFromText(call.name, text, schemas) : undefined;
}

const textOf = (args: unknown) => rawArguments(args) ?? JSON.stringify(args ?? {});

const objectOf = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
