import type { ThinkField } from "../capabilities.js";
import { keptRaw } from "../reply-facts.js";
import {
  createWireFetch,
  currentWireTurn,
  NOTHING_STREAMED,
  type StreamedText,
  type WireFacts,
  type WireTurn,
} from "../wire.js";

export { ModelTimeoutError, callOverWire, type WireTurn } from "../wire.js";

/**
 * A `fetch` for ChatOllama that repairs what it loses on the wire (docs/ollama-protocol.md §3, §7),
 * instead of forking it:
 * - requests: `think` as the run asks (ChatOllama sends booleans only, and no level); `false` with
 *   `format` (structured output and thinking together return empty replies: ollama issue 10976);
 *   each assistant tool-call message gets back the `thinking` it was produced with, as Ollama's
 *   tool-calling docs ask (ChatOllama drops it from history): see `callOverWire`;
 * - requests: each `role:"tool"` message gets the `tool_name` and `tool_call_id` of the call it
 *   answers (paired by order with the preceding assistant message's `tool_calls`);
 * - responses: a tool call whose `arguments` arrives as a string is kept, its text as the one-key
 *   object `RAW_ARGUMENTS`, so ChatOllama does not drop the call silently (the text is read by the
 *   one repair pass, tools/call-repair.ts, as every channel's); `done_reason` noted in the facts;
 * - requests: the call's generation budget as `options.num_predict` (budget.ts);
 * - both: the deadlines of every provider's fetch (wire.ts).
 */

interface WireToolCall {
  id?: string;
  function?: { name?: string; arguments?: unknown };
}
interface WireMessage {
  role?: string;
  thinking?: string;
  tool_calls?: WireToolCall[];
  tool_name?: string;
  tool_call_id?: string;
}

/** Gives every tool message the name and id of the call it answers. Mutates and returns `messages`. */
export function addToolIdentity<T extends WireMessage>(messages: T[]): T[] {
  let calls: WireToolCall[] = [];
  let next = 0;
  for (const m of messages) {
    if (m.role === "assistant") {
      calls = m.tool_calls ?? [];
      next = 0;
    } else if (m.role === "tool") {
      const call = calls[next++];
      if (call?.function?.name && m.tool_name === undefined) m.tool_name = call.function.name;
      if (call?.id && m.tool_call_id === undefined) m.tool_call_id = call.id;
    } else {
      calls = [];
      next = 0;
    }
  }
  return messages;
}

/**
 * Keeps the string `arguments` of the tool calls in one response line (as `RAW_ARGUMENTS`, which
 * ChatOllama passes on where it drops a string); returns the line unchanged otherwise. Notes in
 * `facts` the reply's `done_reason` and its calls' ids (ChatOllama gives each call a UUID of its
 * own instead).
 */
export function repairResponseLine(line: string, facts?: WireFacts): string {
  const done = /"done_reason"\s*:\s*"([a-z_]+)"/.exec(line);
  if (done && facts) facts.finishReason = done[1];
  if (!line.includes('"tool_calls"')) return line;
  try {
    const obj = JSON.parse(line) as { message?: { tool_calls?: WireToolCall[] } };
    const calls = obj.message?.tool_calls ?? [];
    if (facts) facts.callIds = [...(facts.callIds ?? []), ...calls.map((c) => c.id)];
    let changed = false;
    for (const call of calls) {
      const args = call.function?.arguments;
      if (typeof args === "string") {
        call.function!.arguments = keptRaw(args);
        changed = true;
      }
    }
    return changed ? JSON.stringify(obj) : line;
  } catch {
    return line;
  }
}

/** The reply text a streamed line adds (a line of a reply still coming: `"done":false`). */
export function streamedText(line: string): StreamedText {
  if (!line.includes('"done":false')) return NOTHING_STREAMED;
  try {
    const obj = JSON.parse(line) as {
      message?: { content?: string; thinking?: string; tool_calls?: unknown[] };
    };
    const m = obj.message;
    if (!m) return NOTHING_STREAMED;
    return {
      prose: `${m.thinking ?? ""}${m.content ?? ""}`,
      args: m.tool_calls?.length ? JSON.stringify(m.tool_calls) : "",
      ...(m.thinking ? { thinking: m.thinking } : {}),
    };
  } catch {
    return NOTHING_STREAMED;
  }
}

export interface OllamaFetchOptions {
  /** Most ms to wait for response headers, and between two streamed chunks. */
  timeoutMs: number;
  /** `think` for requests without `format`; unset sends none (a model without the capability). */
  think?: ThinkField;
  baseFetch?: typeof fetch;
}

/** Applies the run's `think` and the turn's thinking to a chat request body. Mutates and returns it. */
export function addThinking<
  T extends { messages?: WireMessage[]; format?: unknown; think?: unknown },
>(body: T, think: ThinkField | undefined, turn: WireTurn | undefined): T {
  // `false` is accepted by every model; only a truthy `think` needs the capability.
  if (body.format !== undefined && body.format !== null && body.format !== "") body.think = false;
  else if (turn?.think !== undefined && think !== undefined) body.think = turn.think;
  else if (think !== undefined) body.think = think;
  if (turn && Array.isArray(body.messages)) {
    let k = 0;
    for (const m of body.messages) {
      if (m.role !== "assistant") continue;
      const t = turn.thinking[k++];
      if (t && m.tool_calls?.length && !m.thinking) m.thinking = t;
    }
  }
  return body;
}

/** Builds the repairing fetch. */
export function createOllamaFetch(opts: OllamaFetchOptions): typeof fetch {
  return createWireFetch({
    timeoutMs: opts.timeoutMs,
    isChat: (pathname) => /\/api\/chat$/.test(pathname),
    request: (body) => {
      const parsed = body as {
        messages?: WireMessage[];
        format?: unknown;
        options?: Record<string, unknown>;
        truncate?: boolean;
        shift?: boolean;
      };
      const turn = currentWireTurn();
      if (Array.isArray(parsed.messages)) addToolIdentity(parsed.messages);
      addThinking(parsed, opts.think, turn);
      if (turn?.maxTokens) parsed.options = { ...parsed.options, num_predict: turn.maxTokens };
      // Never a silent cut (Ollama ≥ 0.12; older servers ignore both): a prompt over num_ctx is
      // refused with a 400 instead of losing its oldest messages, and a reply that reaches num_ctx
      // stops with done_reason "length" instead of shifting the prompt out from under itself.
      parsed.truncate = false;
      parsed.shift = false;
      return body;
    },
    line: repairResponseLine,
    generated: streamedText,
    cutEnd: `${JSON.stringify({ message: { role: "assistant", content: "" }, done: true, done_reason: "length" })}\n`,
    ...(opts.baseFetch ? { baseFetch: opts.baseFetch } : {}),
  });
}
