/** What an AI message of keel's keeps of its turn (thinking, usage, the channel), for both turns. */
import type { TurnAnswer } from "../../turn/ask.js";

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
