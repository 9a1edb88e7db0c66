/**
 * A zero-latency scripted chat model for benchmarks: each turn reads the file after the one its
 * newest tool call read, until the planned number of turns, then answers. Identical for keel and the
 * peers, so only the orchestration differs.
 */
import {
  BaseChatModel,
  type BaseChatModelParams,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

export class ScriptedToolModel extends BaseChatModel {
  constructor(
    private readonly turns: number,
    params: BaseChatModelParams = {},
  ) {
    super(params);
  }
  _llmType() {
    return "scripted-bench";
  }
  // The peers bind tools; the script does not need them.
  override bindTools(): this {
    return this;
  }
  // eslint-disable-next-line @typescript-eslint/require-await
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    // The next file follows the newest one the conversation mentions. Read from the end and stop at
    // the first mention, so the model's own cost does not grow with the prompt: the bench measures
    // orchestration, not a regex over the history. (Every agent keeps the newest turns verbatim.)
    let done = 0;
    for (let i = messages.length - 1; i >= 0 && done === 0; i--) {
      const m = messages[i]!;
      const calls = (m as AIMessage).tool_calls ?? [];
      const text = calls.length ? JSON.stringify(calls.map((c) => c.args)) : "";
      const found = [...text.matchAll(/n(\d+)\.txt/g)].map((x) => Number(x[1]));
      if (found.length) done = Math.max(...found) + 1;
    }
    const message =
      done < this.turns
        ? new AIMessage({
            content: "",
            tool_calls: [
              {
                id: `call_${done}`,
                name: "read_file",
                args: { path: `notes/n${done}.txt` },
                type: "tool_call",
              },
            ],
          })
        : new AIMessage({ content: `Read ${done} files.` });
    return {
      generations: [{ message, text: typeof message.content === "string" ? message.content : "" }],
    };
  }
}
