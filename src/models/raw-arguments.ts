/**
 * A call's arguments as the server sent them, when they arrived as text: an OpenAI-compatible
 * server's `function.arguments` the client could not parse (`invalid_tool_calls`), or Ollama's
 * `arguments` string, which ChatOllama would drop with its call — the Ollama wire keeps it as a
 * one-key object (`RAW_ARGUMENTS`) instead. Read, with every other repair, by the one repair pass
 * (tools/call-repair.ts). Pure.
 */

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
