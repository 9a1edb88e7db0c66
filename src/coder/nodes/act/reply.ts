/** Pure classification of a model reply, for routing. */
import { stripReasoning } from "../../../models/tool-calls/reasoning.js";
import { changesThings, type Intent } from "../../../tools/registry.js";

export type ReplyKind = "tool_calls" | "final" | "empty" | "prose" | "unparseable";

/** The text without reasoning, in any dialect of the one list: reasoning is not an answer. */
export function visibleText(content: string): string {
  return stripReasoning(content).trim();
}

/**
 * tool calls → tool_calls; nothing visible → empty; for a build/modify/run request that has not
 * acted yet, text without calls is prose-instead-of-action; otherwise the final answer.
 */
export function classifyReply(reply: {
  toolCallCount: number;
  content: string;
  intent: Intent;
  acted: boolean;
}): ReplyKind {
  if (reply.toolCallCount > 0) return "tool_calls";
  if (visibleText(reply.content) === "") return "empty";
  if (changesThings(reply.intent) && !reply.acted) return "prose";
  return "final";
}
