/**
 * A reply's calls as the server sent them, where the client library loses it. Pure.
 *
 * - Arguments that arrived as text: an OpenAI-compatible server's `function.arguments` the client
 *   could not parse (`invalid_tool_calls`), or Ollama's `arguments` string, which ChatOllama would
 *   drop with its call — the Ollama wire keeps it as a one-key object (`RAW_ARGUMENTS`) instead.
 *   Read, with every other repair, by the one repair pass (tools/call-repair.ts).
 * - Call ids: ChatOllama gives every call a random UUID of its own; the wire notes Ollama's
 *   (`WireFacts.callIds`) and `withServerCallIds` gives them back.
 */
import type { WireFacts } from "./wire.js";

/** The key under which the Ollama wire keeps arguments that arrived as a string. */
export const RAW_ARGUMENTS = "keel_raw_arguments";

/** Arguments the wire kept as text, as the client library passes them on. */
export const keptRaw = (text: string) => ({ [RAW_ARGUMENTS]: text });

/**
 * The text of a call's arguments when they arrived as text (a string, or what the wire kept);
 * undefined for arguments that are an object already.
 */
export function rawArguments(args: unknown): string | undefined {
  if (typeof args === "string") return args;
  if (!args || typeof args !== "object" || Array.isArray(args)) return undefined;
  const keys = Object.keys(args);
  const raw = (args as Record<string, unknown>)[RAW_ARGUMENTS];
  return keys.length === 1 && typeof raw === "string" ? raw : undefined;
}

/**
 * The reply with its calls' ids as the server gave them (`facts.callIds`), where the client
 * library replaced them and every call of the reply is accounted for; otherwise as it is. Mutates
 * and returns `reply`.
 */
export function withServerCallIds<R extends { tool_calls?: Array<{ id?: string }> }>(
  reply: R,
  facts: WireFacts,
): R {
  const ids = facts.callIds;
  const calls = reply.tool_calls;
  if (!ids || !calls || ids.length !== calls.length) return reply;
  reply.tool_calls = calls.map((c, i) => (ids[i] ? { ...c, id: ids[i] } : c));
  return reply;
}
