/**
 * Keeps a request inside the context window: older turns are folded into a record of fixed size
 * (record.ts), always keeping the system prompt, the request and the newest turns; if that is not
 * enough, the largest remaining results are clipped head-and-tail. Pure. The work per turn is
 * bounded by what is kept, not by the length of the thread.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { clipMiddle, estimateTokens, replyReserve } from "../../../guard/context-budget.js";
import { memo, prefixed } from "./prefix.js";
import { foldRecord, recordTokens, textOf } from "./record.js";

const PER_MESSAGE = 8;
const KEEP_LAST = 4;

/** Token estimate of one message. */
const sizeOf = memo((m) => {
  const calls = AIMessage.isInstance(m) && m.tool_calls?.length ? JSON.stringify(m.tool_calls) : "";
  return estimateTokens(textOf(m) + calls) + PER_MESSAGE;
});
/** Tokens of `messages[0..end)`. */
const tokensUpTo = prefixed<{ n: number }>(
  () => ({ n: 0 }),
  (t) => ({ n: t.n }),
  (t, m) => void (t.n += sizeOf(m)),
);

export interface Fitted {
  messages: BaseMessage[];
  /** Set when anything was folded or clipped. */
  compacted?: { folded: number; tokensBefore: number; tokensAfter: number; budget: number };
}

/**
 * Fits `history` (after the system prompt and tool schemas, `fixed` text) into `window` tokens.
 * `findRequest` gives the index of the message holding the user's request; it is never folded or
 * clipped. The newest turns are kept whole (a call with its results); older ones are folded.
 */
export function fitToWindow(
  history: BaseMessage[],
  fixed: string,
  window: number,
  findRequest: () => number,
): Fitted {
  const budget = window - replyReserve(window);
  const fixedTokens = estimateTokens(fixed) + PER_MESSAGE;
  const before = fixedTokens + tokensUpTo(history, history.length, 0).n;
  if (before <= budget) return { messages: history };

  const requestIndex = findRequest();
  const request = history[requestIndex];
  // Keep whole groups (an assistant message and the results answering it), newest first, while they
  // fit beside the request and the record; the groups of the newest KEEP_LAST messages always stay.
  const room = budget - fixedTokens - recordTokens(budget) - (request ? sizeOf(request) : 0);
  let start = history.length;
  let used = 0;
  while (start > 0) {
    let open = start - 1;
    while (open > 0 && ToolMessage.isInstance(history[open])) open--;
    let tokens = 0;
    for (let i = open; i < start; i++) if (i !== requestIndex) tokens += sizeOf(history[i]!);
    const pinned = start - 1 >= history.length - KEEP_LAST;
    if (!pinned && used + tokens > room) break;
    used += tokens;
    start = open;
  }
  const record = foldRecord(history, start, requestIndex, budget);
  const note = record ? [new HumanMessage(record)] : [];
  const kept = history.slice(start);
  let messages: BaseMessage[];
  if (requestIndex >= start || !request) messages = [...note, ...kept];
  else if (requestIndex === 0) messages = [request, ...note, ...kept];
  else messages = [...note, request, ...kept];

  // Still too big: clip the largest results and texts (never the request) until it fits.
  let size = fixedTokens + messages.reduce((a, m) => a + sizeOf(m), 0);
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
  const folded = start - (requestIndex < start ? 1 : 0);
  return {
    messages,
    compacted: { folded, tokensBefore: before, tokensAfter: size, budget },
  };
}
