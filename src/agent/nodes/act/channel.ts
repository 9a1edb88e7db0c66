/**
 * The tool channel of a turn (F9), pure: how the history is shown to the model and how its reply
 * is read, in native mode (the `tools` field) or prompt mode (tools described in the prompt).
 */
import type { AIMessage, ToolCall } from "@langchain/core/messages";
import type { ToolMode } from "../../../models/capabilities.js";
import { capped, parseToolCalls } from "../../../models/tool-calls/index.js";
import { argumentsFromText } from "../../../models/tool-calls/parse.js";
import type { ArgSchemas, FormatName, RejectedCall } from "../../../models/tool-calls/types.js";
import { callSyntax } from "../../turn/tool-prompt.js";

export interface ReadReply {
  calls: ToolCall[];
  /** Visible text, without any tool-call markup. */
  content: string;
  /** Markup was present but held no valid call: what was wrong, and the syntax expected. */
  problem?: string;
  /** Calls were found in the text rather than in the tools API. */
  fromText: boolean;
  /** Entries of the reply's call list that are not valid calls, left out (see `rejectedNote`). */
  rejected?: RejectedCall[];
}

export interface ReadOptions {
  mode: ToolMode;
  format: FormatName;
  toolNames: string[];
  schemas: ArgSchemas;
}

/**
 * Reads the calls of a reply. Native: the API's calls; if there are none, a call written as text
 * to an offered tool is salvaged. Prompt: calls are parsed from the text, any name (the executor
 * answers unknown names with the list of tools).
 */
export function readReply(ai: AIMessage, o: ReadOptions): ReadReply {
  const text = typeof ai.content === "string" ? ai.content : ai.text;
  if (o.mode === "native") {
    // at most MAX_CALLS_PER_REPLY of the API's calls run; the model is told of the rest
    const { run, over } = capped(nativeCalls(ai, o.schemas));
    if (run.length)
      return {
        calls: run,
        content: text,
        fromText: false,
        ...(over.length ? { rejected: over } : {}),
      };
  }
  const parsed = parseToolCalls(text, {
    schemas: o.schemas,
    ...(o.mode === "native" ? { toolNames: o.toolNames } : {}),
  });
  // Ids are given where the reply becomes a message (conversation.ts `withCallIds`).
  const calls: ToolCall[] = parsed.calls.map((c) => ({
    name: c.name,
    args: c.arguments,
    type: "tool_call",
  }));
  if (calls.length)
    return {
      calls,
      content: parsed.content,
      fromText: true,
      ...(parsed.rejected ? { rejected: parsed.rejected } : {}),
    };
  if (parsed.problem) {
    const how =
      o.mode === "native"
        ? "Call tools through the tool-calling interface, or write the call exactly in this form."
        : "";
    return {
      calls: [],
      content: text,
      fromText: false,
      problem: `${parsed.problem}. ${how} ${callSyntax(o.format)}`.replace(/\s+\./g, ".").trim(),
    };
  }
  return { calls: [], content: text, fromText: false };
}

/**
 * The API's calls, with those whose arguments the client could not parse as JSON (XML or other
 * markup a server put in `function.arguments`: continue issue 11453) read by keel's parsers, in the
 * order the server sent them, ids kept. A call whose arguments stay unreadable is left out here;
 * the model hears about it from the empty turn.
 */
function nativeCalls(ai: AIMessage, schemas: ArgSchemas): ToolCall[] {
  // Arguments the client parsed into something other than an object (a JSON string holding the
  // JSON: arguments encoded twice) are read by the same repair as unparsable ones.
  const valid: ToolCall[] = [];
  const invalid = [...(ai.invalid_tool_calls ?? [])];
  for (const c of ai.tool_calls ?? []) {
    const args: unknown = c.args;
    if (args && typeof args === "object" && !Array.isArray(args)) valid.push(c);
    else
      invalid.push({
        name: c.name,
        args: typeof args === "string" ? args : JSON.stringify(args ?? {}),
        ...(c.id ? { id: c.id } : {}),
        type: "invalid_tool_call",
        error: "arguments are not an object",
      });
  }
  if (invalid.length === 0) return valid;
  const salvaged: ToolCall[] = [];
  for (const bad of invalid) {
    const args = bad.name && bad.args ? argumentsFromText(bad.name, bad.args, schemas) : undefined;
    if (bad.name && args)
      salvaged.push({ name: bad.name, args, ...(bad.id ? { id: bad.id } : {}), type: "tool_call" });
  }
  // The server's order: the raw calls as the client kept them (OpenAI's `tool_calls`), by id.
  const raw = (ai.additional_kwargs?.tool_calls ?? []) as Array<{ id?: string }>;
  const position = (c: ToolCall) => {
    const at = raw.findIndex((r) => r.id !== undefined && r.id === c.id);
    return at < 0 ? Number.MAX_SAFE_INTEGER : at;
  };
  return [...valid, ...salvaged].sort((a, b) => position(a) - position(b));
}

/**
 * What the model is told, with its first call's result, about the entries of its call list that
 * keel could not read and so did not run: each as written, and why.
 */
export function rejectedNote(rejected: readonly RejectedCall[]): string {
  const list = rejected.map((r) => `${r.text} (${r.reason})`).join("; ");
  const n = rejected.reduce((sum, r) => sum + (r.count ?? 1), 0);
  const them = n === 1 ? "it" : "them";
  // entries past the per-reply cap were read, not run: they are for a later reply
  if (rejected.some((r) => r.count !== undefined))
    return `(keel did not run ${n} other entr${n === 1 ? "y" : "ies"} of your tool-call list: ${list}. Make ${them} in your next replies if you still need ${them}, a few at a time.)`;
  return `(keel could not read ${n} other entr${n === 1 ? "y" : "ies"} of your tool-call list, so ${n === 1 ? "it was" : "they were"} not run: ${list}. Write ${them} again as valid calls if you still need ${them}.)`;
}
