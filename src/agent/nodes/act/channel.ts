/**
 * The tool channel of a turn (F9), pure: how the history is shown to the model and how its reply
 * is read, in native mode (the `tools` field) or prompt mode (tools described in the prompt).
 */
import type { AIMessage, ToolCall } from "@langchain/core/messages";
import type { ToolMode } from "../../../models/capabilities.js";
import { parseToolCalls } from "../../../models/tool-calls/index.js";
import type { ArgSchemas, FormatName } from "../../../models/tool-calls/types.js";
import { callSyntax } from "./tool-prompt.js";

export interface ReadReply {
  calls: ToolCall[];
  /** Visible text, without any tool-call markup. */
  content: string;
  /** Markup was present but held no valid call: what was wrong, and the syntax expected. */
  problem?: string;
  /** Calls were found in the text rather than in the tools API. */
  fromText: boolean;
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
  if (o.mode === "native" && ai.tool_calls?.length)
    return { calls: ai.tool_calls, content: text, fromText: false };
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
  if (calls.length) return { calls, content: parsed.content, fromText: true };
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
