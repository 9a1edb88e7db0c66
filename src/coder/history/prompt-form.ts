/**
 * How the history is shown in prompt mode, pure. Prompt mode has no tool roles on the wire (a
 * tool-less chat template may drop them): calls go back as the text the model wrote, results as
 * user messages in <tool_response> tags. Each message is converted once, so per-message caches and
 * the server's KV cache see the same text turn after turn.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { memo } from "./prefix.js";

/** The history as prompt mode shows it. */
export function toPromptHistory(messages: readonly BaseMessage[]): BaseMessage[] {
  return messages.map(promptForm);
}

/** The message a prompt-mode message was made from (itself when it needed no change). */
export const nativeOf = (m: BaseMessage): BaseMessage => natives.get(m) ?? m;

const natives = new WeakMap<BaseMessage, BaseMessage>();
const promptForm = memo((m) => {
  let shown = m;
  if (ToolMessage.isInstance(m)) {
    const body = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
    shown = new HumanMessage(
      `<tool_response name="${m.name ?? "tool"}">\n${body}\n</tool_response>`,
    );
  } else if (AIMessage.isInstance(m) && m.tool_calls?.length) {
    const raw = m.additional_kwargs?.keel_raw_text as string | undefined;
    const text = typeof m.content === "string" ? m.content : m.text;
    // A call made through the tools API has no markup of its own (a run that fell back to prompt
    // mode): show it in the tag form every prompt-mode parser reads.
    const calls = m.tool_calls
      .map(
        (c) => `<tool_call>\n${JSON.stringify({ name: c.name, arguments: c.args })}\n</tool_call>`,
      )
      .join("\n");
    shown = new AIMessage({ content: raw ?? (text.trim() ? `${text}\n${calls}` : calls) });
  }
  if (shown !== m) natives.set(shown, m);
  return shown;
});
