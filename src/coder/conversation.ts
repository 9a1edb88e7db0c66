/**
 * Reading the conversation, pure: which calls of the newest reply still wait for their answer, and
 * the one place call ids are given (a call a model wrote as text, or a server that sent none, gets
 * one here, so every tool message can name the call it answers: F8).
 */
import { Overwrite } from "@langchain/langgraph";
import { AIMessage, BaseMessage, ToolMessage, type ToolCall } from "@langchain/core/messages";

/** The calls of the newest assistant message that have no tool message yet, in call order. */
export function unansweredCalls(messages: readonly BaseMessage[]): ToolCall[] {
  return pendingIn(messages, new Set()) ?? [];
}

/**
 * The calls still unanswered once a node's `written` messages (its update's `messages`) join the
 * conversation: a router's view of what the node decided, without building the state after it.
 */
export function unansweredAfter(messages: readonly BaseMessage[], written: unknown): ToolCall[] {
  if (Overwrite.isInstance(written)) return unansweredAfter([], written.value);
  const added = (Array.isArray(written) ? written : [written]).filter((m): m is BaseMessage =>
    BaseMessage.isInstance(m),
  );
  const answered = new Set<string>();
  return pendingIn(added, answered) ?? pendingIn(messages, answered) ?? [];
}

/**
 * The unanswered calls of the newest assistant message in `messages`, adding the ids answered
 * after it to `answered`; undefined when `messages` holds no assistant message.
 */
function pendingIn(messages: readonly BaseMessage[], answered: Set<string>) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (ToolMessage.isInstance(m)) answered.add(m.tool_call_id);
    else if (AIMessage.isInstance(m))
      return (m.tool_calls ?? []).filter((c) => !c.id || !answered.has(c.id));
  }
  return undefined;
}

/**
 * The update with an id on each new message that has none: `k` and its position in the thread
 * (`archived` plus its index), unique in the thread and a few bytes where LangGraph's own (a
 * UUID, or `run-<uuid>-tool-<call id>` while messages stream) cost 36 to 85 — in every write, every
 * snapshot and every move out that names it. Mutates the update's messages; returns the update.
 */
export function withMessageIds<U extends { messages?: unknown }>(
  state: { archived: number; messages: readonly BaseMessage[] },
  update: U,
): U {
  const written = update.messages;
  if (written === undefined || Overwrite.isInstance(written)) return update;
  let at = state.archived + state.messages.length;
  for (const m of Array.isArray(written) ? written : [written]) {
    if (!BaseMessage.isInstance(m)) continue;
    if (m.id == null) {
      const id = `k${at}`;
      m.id = id;
      (m.lc_kwargs as { id?: string }).id = id;
    }
    at++;
  }
  return update;
}

/** The calls of turn `turn` with an id each: the server's when it sent one, else `call_<turn>_<i>`. */
export function withCallIds(calls: readonly ToolCall[], turn: number): ToolCall[] {
  return calls.map((c, i) => ({ ...c, id: c.id || `call_${turn}_${i}` }));
}
