/**
 * Keeps a request inside the context window: older turns are folded into a short record, always
 * keeping the system prompt, the request and the newest turns; if that is not enough, the largest
 * remaining results are clipped head-and-tail. Pure.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import {
  clipMiddle,
  estimateTokens,
  planCompaction,
  replyReserve,
  type Sized,
} from "../../../guard/context-budget.js";

const PER_MESSAGE = 8;
const KEEP_LAST = 4;

const textOf = (m: BaseMessage) =>
  typeof m.content === "string" ? m.content : JSON.stringify(m.content);
/** Token estimates per message object; messages are immutable, so an estimate never goes stale. */
const sizes = new WeakMap<BaseMessage, number>();
const sizeOf = (m: BaseMessage) => {
  let n = sizes.get(m);
  if (n === undefined) {
    const calls =
      AIMessage.isInstance(m) && m.tool_calls?.length ? JSON.stringify(m.tool_calls) : "";
    n = estimateTokens(textOf(m) + calls) + PER_MESSAGE;
    sizes.set(m, n);
  }
  return n;
};
const one = (s: string, n: number) => {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

/** One line per folded message, so the model keeps a memory of what happened. */
function record(messages: BaseMessage[]): string {
  const lines = messages.map((m) => {
    if (AIMessage.isInstance(m) && m.tool_calls?.length) {
      return `- you called ${m.tool_calls.map((c) => `${c.name}(${one(JSON.stringify(c.args), 80)})`).join(", ")}`;
    }
    if (ToolMessage.isInstance(m))
      return `  → ${m.status === "error" ? "error" : "ok"}: ${one(textOf(m), 100)}`;
    if (AIMessage.isInstance(m)) return `- you said: ${one(textOf(m), 120)}`;
    return `- ${textOf(m).startsWith("[keel]") ? "keel" : "user"}: ${one(textOf(m).replace(/^\[keel\]\s*/, ""), 120)}`;
  });
  return `[keel] Earlier turns were compacted to fit the context window. What happened in them:\n${lines.join("\n")}`;
}

export interface Fitted {
  messages: BaseMessage[];
  /** Set when anything was folded or clipped. */
  compacted?: { folded: number; tokensBefore: number; tokensAfter: number; budget: number };
}

/**
 * Fits `history` (after the system prompt and tool schemas, `fixed` text) into `window` tokens.
 * `requestIndex` is the message holding the user's request; it is never folded or clipped.
 */
export function fitToWindow(
  history: BaseMessage[],
  fixed: string,
  window: number,
  findRequest: () => number,
): Fitted {
  const budget = window - replyReserve(window);
  const fixedTokens = estimateTokens(fixed) + PER_MESSAGE;
  const total = (ms: BaseMessage[]) => fixedTokens + ms.reduce((a, m) => a + sizeOf(m), 0);
  const before = total(history);
  if (before <= budget) return { messages: history };
  const requestIndex = findRequest();

  // An assistant message and the tool results answering it form one group.
  let group = 0;
  const sized: Sized[] = history.map((m, i) => {
    if (!ToolMessage.isInstance(m)) group++;
    return {
      tokens: sizeOf(m),
      group,
      pinned: i === requestIndex || i >= history.length - KEEP_LAST,
    };
  });
  const lastGroups = new Set(sized.filter((s) => s.pinned).map((s) => s.group));
  for (const s of sized) if (lastGroups.has(s.group) && s !== sized[requestIndex]) s.pinned = true;
  if (sized[requestIndex]) sized[requestIndex].pinned = true;

  const fold = new Set(planCompaction(sized, fixedTokens + 200, budget));
  let messages: BaseMessage[] = history;
  if (fold.size) {
    const first = Math.min(...fold);
    messages = [];
    history.forEach((m, i) => {
      if (i === first)
        messages.push(new HumanMessage(record(history.filter((_, j) => fold.has(j)))));
      if (!fold.has(i)) messages.push(m);
    });
  }
  // Still too big: clip the largest results and texts (never the request) until it fits.
  const request = history[requestIndex];
  let size = total(messages);
  for (let guard = 0; size > budget && guard < 50; guard++) {
    const biggest = messages.filter((m) => m !== request).sort((a, b) => sizeOf(b) - sizeOf(a))[0];
    if (!biggest || textOf(biggest).length < 400) break;
    const clipped = clipMiddle(
      textOf(biggest),
      Math.floor(textOf(biggest).length / 2),
      "call it again more narrowly",
    );
    const copy = ToolMessage.isInstance(biggest)
      ? new ToolMessage({
          content: clipped,
          tool_call_id: biggest.tool_call_id,
          name: biggest.name,
          status: biggest.status,
        })
      : AIMessage.isInstance(biggest)
        ? new AIMessage({ content: clipped, tool_calls: biggest.tool_calls ?? [] })
        : new HumanMessage(clipped);
    messages = messages.map((m) => (m === biggest ? copy : m));
    size += sizeOf(copy) - sizeOf(biggest);
  }
  return {
    messages,
    compacted: { folded: fold.size, tokensBefore: before, tokensAfter: size, budget },
  };
}
