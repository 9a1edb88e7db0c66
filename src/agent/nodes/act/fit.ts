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

/** One line per folded message, kept per message object (messages are immutable). */
const lines = new WeakMap<BaseMessage, string>();
function lineOf(m: BaseMessage): string {
  let line = lines.get(m);
  if (line === undefined) {
    if (AIMessage.isInstance(m) && m.tool_calls?.length)
      line = `- you called ${m.tool_calls.map((c) => `${c.name}(${one(JSON.stringify(c.args), 80)})`).join(", ")}`;
    else if (ToolMessage.isInstance(m))
      line = `  → ${m.status === "error" ? "error" : "ok"}: ${one(textOf(m), 100)}`;
    else if (AIMessage.isInstance(m)) line = `- you said: ${one(textOf(m), 120)}`;
    else
      line = `- ${textOf(m).startsWith("[keel]") ? "keel" : "user"}: ${one(textOf(m).replace(/^\[keel\]\s*/, ""), 120)}`;
    lines.set(m, line);
  }
  return line;
}

/** Estimated tokens of one record line (they are cut at about 130 characters). */
const LINE_TOKENS = 40;

/**
 * The record's shape for a budget: how many folded messages it spells out (the newest ones), and
 * how many characters it gives to naming what the older ones touched. Both are fixed, so the
 * record — and the work to build it — stays the same size however long the thread grows.
 */
const recordShape = (budget: number) => ({
  lines: Math.max(6, Math.min(40, Math.floor(budget / 8 / LINE_TOKENS))),
  targetChars: Math.floor((budget / 16) * 3.5),
});
const recordTokens = (budget: number) => {
  const shape = recordShape(budget);
  return (shape.lines + 2) * LINE_TOKENS + estimateTokens("x".repeat(shape.targetChars));
};

/** What a call worked on: its path, pattern or command. */
const targetOf = (args: Record<string, unknown>) => {
  const t = args.path ?? args.pattern ?? args.command;
  return typeof t === "string" ? one(t, 60) : undefined;
};

/**
 * Per tool, the calls among `messages` and the distinct things they worked on, named while they
 * fit in `chars` (so the model still knows which files it has already read), then counted.
 */
function tally(messages: BaseMessage[], chars: number): string {
  const tools = new Map<string, { calls: number; targets: Set<string>; more: number }>();
  let errors = 0;
  let left = chars;
  for (const m of messages) {
    if (ToolMessage.isInstance(m) && m.status === "error") errors++;
    if (!AIMessage.isInstance(m)) continue;
    for (const c of m.tool_calls ?? []) {
      const entry = tools.get(c.name) ?? { calls: 0, targets: new Set<string>(), more: 0 };
      tools.set(c.name, entry);
      entry.calls++;
      const target = targetOf(c.args);
      if (target === undefined || entry.targets.has(target)) continue;
      if (target.length + 2 <= left) {
        entry.targets.add(target);
        left -= target.length + 2;
      } else entry.more++;
    }
  }
  const parts = [...tools].map(([name, t]) => {
    const named = [...t.targets].join(", ") + (t.more ? `, and ${t.more} more` : "");
    return `${name} ×${t.calls}${named ? ` (${named})` : ""}`;
  });
  return [...parts, ...(errors ? [`${errors} failed`] : [])].join("; ");
}

/**
 * The record of the folded messages (oldest first): what the older ones did, per tool, then a line
 * for each newer one, starting at a call rather than at its result.
 */
function record(folded: BaseMessage[], budget: number): string {
  const shape = recordShape(budget);
  let from = Math.max(0, folded.length - shape.lines);
  while (from < folded.length && ToolMessage.isInstance(folded[from])) from++;
  const older = tally(folded.slice(0, from), shape.targetChars);
  return [
    "[keel] Earlier turns were compacted to fit the context window. What happened in them:",
    ...(from > 0 ? [`- ${from} earlier messages${older ? `; calls: ${older}` : ""}`] : []),
    ...folded.slice(from).map(lineOf),
  ].join("\n");
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

  const fold = new Set(planCompaction(sized, fixedTokens + recordTokens(budget), budget));
  let messages: BaseMessage[] = history;
  if (fold.size) {
    const first = Math.min(...fold);
    messages = [];
    history.forEach((m, i) => {
      if (i === first)
        messages.push(
          new HumanMessage(
            record(
              history.filter((_, j) => fold.has(j)),
              budget,
            ),
          ),
        );
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
