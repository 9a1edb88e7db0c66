/**
 * A zero-latency scripted chat model for benchmarks: each turn reads the next file after the
 * highest one the conversation mentions, until the planned number of turns, then answers. Identical for keel and the peers, so only the
 * orchestration differs.
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
    // The next file follows the highest one mentioned: robust to keel folding old turns into a record.
    const seen = messages.flatMap((m) =>
      [...JSON.stringify(m.content).matchAll(/notes\/n(\d+)\.txt/g)].map((x) => Number(x[1])),
    );
    const fromCalls = messages.flatMap((m) =>
      ((m as AIMessage).tool_calls ?? []).map((c) =>
        Number(/n(\d+)/.exec(String(c.args.path))?.[1]),
      ),
    );
    const done = Math.max(-1, ...seen, ...fromCalls.filter((n) => !Number.isNaN(n))) + 1;
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
