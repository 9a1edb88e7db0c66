/**
 * What act makes of a model reply beyond its calls (channel.ts), pure: its kind, for routing; its
 * visible text; what its AI message keeps of the turn.
 */
import { stripReasoning } from "../../../models/tool-calls/reasoning.js";
import { changesThings, type Intent } from "../../../tools/registry.js";
import type { TurnAnswer } from "../../turn/ask.js";

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

/**
 * What an AI message keeps of its turn: thinking, the server's counts (`keel_usage`) and
 * `keel_turn` (the model, the channel, and whether its calls were salvaged from text on the native
 * channel) for keel stats and the outcome. Nothing else of the server's metadata: every field is
 * stored in a write and in the conversation's snapshots, and keel reads none of the rest (the
 * client library's `usage_metadata` holds the counts `keel_usage` has).
 */
export function turnMetadata(
  answer: TurnAnswer,
  model: string,
  extra: Record<string, unknown> = {},
  salvaged = false,
) {
  const reply = answer.reply;
  const thinking = reply.additional_kwargs?.reasoning_content;
  return {
    additional_kwargs: {
      ...(typeof thinking === "string" && thinking ? { reasoning_content: thinking } : {}),
      ...extra,
    },
    response_metadata: {
      ...(answer.usage ? { keel_usage: answer.usage } : {}),
      keel_turn: { model, mode: answer.mode, ...(salvaged ? { salvaged } : {}) },
    },
  };
}
