/**
 * The tool channel of a turn (F9), pure: how the history is shown to the model and how its reply
 * is read, in native mode (the `tools` field) or prompt mode (tools described in the prompt).
 */
import type { AIMessage, ToolCall } from "@langchain/core/messages";
import type { ToolMode } from "../../../models/capabilities.js";
import { capped, parseToolCalls } from "../../../models/tool-calls/index.js";
import type { ArgSchemas, FormatName, RejectedCall } from "../../../models/tool-calls/types.js";
import { repairCall, type RawCall } from "../../../tools/call-repair.js";
import type { KeelTool } from "../../../tools/types.js";
import { callSyntax } from "../../turn/tool-prompt.js";

export interface ReadReply {
  /** The calls, each through the one repair pass (tools/call-repair.ts). */
  calls: ToolCall[];
  /** What the pass repaired in each call, in the order of `calls` (empty: nothing). */
  repairs: string[][];
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
  /** The tools offered this turn. */
  tools: readonly KeelTool[];
  /** Their JSON schemas by name (call-repair.ts `schemasOf`). */
  schemas: ArgSchemas;
}

/**
 * Reads the calls of a reply. Native: the API's calls; if there are none, a call written as text
 * to an offered tool is salvaged. Prompt: calls are parsed from the text, any name (the one repair
 * pass maps a foreign name; the executor answers one it cannot with the list of tools).
 */
export function readReply(ai: AIMessage, o: ReadOptions): ReadReply {
  const text = typeof ai.content === "string" ? ai.content : ai.text;
  if (o.mode === "native") {
    // at most MAX_CALLS_PER_REPLY of the API's calls are repaired and run; the model is told of
    // the rest
    const { run, over } = capped(nativeCalls(ai));
    const calls = repaired(run, o);
    if (calls.calls.length)
      return {
        ...calls,
        content: text,
        fromText: false,
        ...(over.length ? { rejected: over } : {}),
      };
  }
  const parsed = parseToolCalls(text, {
    schemas: o.schemas,
    ...(o.mode === "native" ? { toolNames: o.tools.map((t) => t.name) } : {}),
  });
  // Ids are given where the reply becomes a message (conversation.ts `withCallIds`).
  const calls = repaired(
    parsed.calls.map((c) => ({ name: c.name, args: c.arguments })),
    o,
  );
  if (calls.calls.length)
    return {
      ...calls,
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
      repairs: [],
      content: text,
      fromText: false,
      problem: `${parsed.problem}. ${how} ${callSyntax(o.format)}`.replace(/\s+\./g, ".").trim(),
    };
  }
  return { calls: [], repairs: [], content: text, fromText: false };
}

/** The calls through the one repair pass; a call whose arguments stay unreadable is left out. */
function repaired(raw: readonly RawCall[], o: ReadOptions): Pick<ReadReply, "calls" | "repairs"> {
  const calls: ToolCall[] = [];
  const repairs: string[][] = [];
  for (const c of raw) {
    const r = repairCall(c, o.tools, o.schemas);
    if (!r) continue;
    calls.push({ name: r.name, args: r.args, ...(r.id ? { id: r.id } : {}), type: "tool_call" });
    repairs.push(r.notes);
  }
  return { calls, repairs };
}

/**
 * The API's calls as they came, in the order the server sent them, ids kept: those the client
 * parsed, and those whose arguments it could not (XML or other markup a server put in
 * `function.arguments`: continue issue 11453), their text for the repair pass to read. A call
 * whose arguments stay unreadable there is left out; the model hears about it from the empty turn.
 */
function nativeCalls(ai: AIMessage): RawCall[] {
  const calls: RawCall[] = [
    ...(ai.tool_calls ?? []),
    ...(ai.invalid_tool_calls ?? [])
      .filter((c) => c.name && c.args)
      .map((c) => ({ name: c.name!, args: c.args!, ...(c.id ? { id: c.id } : {}) })),
  ];
  // The server's order: the raw calls as the client kept them (OpenAI's `tool_calls`), by id.
  const raw = (ai.additional_kwargs?.tool_calls ?? []) as Array<{ id?: string }>;
  if (raw.length === 0 || !ai.invalid_tool_calls?.length) return calls;
  const position = (c: RawCall) => {
    const at = raw.findIndex((r) => r.id !== undefined && r.id === c.id);
    return at < 0 ? Number.MAX_SAFE_INTEGER : at;
  };
  return calls.sort((a, b) => position(a) - position(b));
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
