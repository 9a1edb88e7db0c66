/** Writes a scripted reply to the wire exactly as Ollama would (docs/ollama-protocol.md §4–§6). */
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { countTokens, cutToTokens } from "../tokens.js";
import type { PrefillRecord } from "./prefill.js";
import type { AnswerReply, ChatView, Reply, WireMessage, WireToolCall } from "./types.js";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const callId = () => `call_${Array.from(randomBytes(8), (b) => ALPHABET[b % 36]).join("")}`;
const now = () => new Date().toISOString().replace(/(\.\d{3})Z$/, "$1000Z");
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function sendJson(res: ServerResponse, status: number, obj: unknown): void {
  const text = JSON.stringify(obj);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

export const sendError = (res: ServerResponse, status: number, error: string): void =>
  sendJson(res, status, { error });

function chunk(model: string, message: Partial<WireMessage>, done = false) {
  return {
    model,
    created_at: now(),
    message: { role: "assistant", content: "", ...message },
    done,
  };
}

/** The final line's usage fields, from the fake's account of the request (nanoseconds). */
function metrics(
  r: PrefillRecord,
  machine: { prefillTokensPerSec: number; generateTokensPerSec: number; loadSec: number },
) {
  const ns = (sec: number) => Math.round(sec * 1e9);
  const load = ns(r.loaded ? machine.loadSec : 0.001);
  const prompt = ns(r.evaluatedTokens / machine.prefillTokensPerSec);
  const gen = ns(r.generatedTokens / machine.generateTokensPerSec);
  return {
    total_duration: load + prompt + gen,
    load_duration: load,
    prompt_eval_count: Math.max(1, r.promptTokens),
    prompt_eval_duration: Math.max(1, prompt),
    eval_count: r.generatedTokens,
    eval_duration: gen,
  };
}

function split(text: string, pieces: number): string[] {
  if (!text) return [];
  const size = Math.ceil(text.length / Math.max(1, Math.min(pieces, text.length)));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export interface ReplyTarget {
  res: ServerResponse;
  view: ChatView;
  stream: boolean;
  /** The model thinks (has the capability and `think` was not false). */
  thinks: boolean;
  /** Where script mistakes are recorded. */
  violations: string[];
  /** Responses left hanging, closed with the server. */
  hanging: Set<ServerResponse>;
  /** Completes the request's prefill account once the reply is known (see prefill.ts). */
  account: (
    reply: { content: string; tool_calls?: WireToolCall[] },
    generated?: number,
  ) => PrefillRecord;
  machine: { prefillTokensPerSec: number; generateTokensPerSec: number; loadSec: number };
}

/** Answers one chat request with a scripted reply or an injected fault. */
export async function writeReply(reply: Reply, t: ReplyTarget): Promise<void> {
  if (!("fault" in reply)) return writeAnswer(reply, t);
  const { res } = t;
  const line = (obj: unknown) => res.write(`${JSON.stringify(obj)}\n`);
  const piece = (content: string) => line(chunk(t.view.body.model, { content }));
  const ndjson = () => res.writeHead(200, { "Content-Type": "application/x-ndjson" });
  switch (reply.fault) {
    case "status":
      if (reply.delayMs) await sleep(reply.delayMs);
      return sendError(res, reply.status, reply.error);
    case "reset-before":
      res.socket?.destroy();
      return;
    case "hang":
      t.hanging.add(res);
      return;
    case "cut-mid-stream":
      ndjson();
      piece("Let me");
      await sleep(20);
      res.socket?.destroy();
      return;
    case "no-done":
      ndjson();
      piece("Partial answer");
      res.end();
      return;
    case "stream-error":
      ndjson();
      piece("Work");
      line({ error: reply.error });
      res.end();
      return;
    case "malformed-line":
      return writeAnswer({ ...reply.then, pieces: reply.then.pieces ?? 2 }, t, true);
  }
}

function violation(t: ReplyTarget, why: string): void {
  t.violations.push(why);
  sendError(t.res, 500, `fake-ollama: ${why}`);
}

/** The script's call to a tool the request did not offer, said as a violation; undefined if none. */
export function unofferedCall(r: AnswerReply, view: ChatView): string | undefined {
  const unknown = (r.toolCalls ?? []).find(
    (c) => !r.allowUnknownTools && !view.toolNames.includes(c.name),
  );
  if (!unknown) return undefined;
  return `script called tool "${unknown.name}" which the request did not offer (offered: ${view.toolNames.join(", ") || "none"})`;
}

/** What the script got wrong for this request (an unoffered tool, non-JSON when structured). */
function scriptMistake(r: AnswerReply, view: ChatView, text: string): string | undefined {
  const unoffered = unofferedCall(r, view);
  if (unoffered) return unoffered;
  if (view.structured && !r.allowInvalidJson) {
    try {
      JSON.parse(text);
    } catch {
      return `script answered a structured request with content that is not JSON: ${text.slice(0, 80)}`;
    }
  }
  return undefined;
}

/** The tokens the reply may generate (-1: no limit), from num_predict and, with `shift: false`, the window. */
function generationLimit(r: AnswerReply, view: ChatView): number {
  // num_predict stops generation: the text so far, no call, done_reason "length". So does the end
  // of the window when the request says `shift: false` (by default the runner shifts the context
  // and goes on, dropping the prompt's middle).
  const predict = Number(view.body.options?.num_predict ?? -1);
  // (The token sampled as the window filled is counted too: prompt + reply = num_ctx + 1.)
  const room = view.body.shift === false ? Math.max(1, view.numCtx - view.promptTokens + 1) : -1;
  return r.ignoreBudget
    ? -1
    : predict >= 0 && room >= 0
      ? Math.min(predict, room)
      : Math.max(predict, room);
}

/** The reply as generated within `limit`: what is sent, whether it was cut, and the tokens to account. */
interface Generated {
  thinking: string;
  content: string;
  calls: WireToolCall[];
  /** Cut at the limit (done_reason "length", no calls). */
  over: boolean;
  /** Tokens generated, when not left to the account to count from the reply. */
  tokens: number | undefined;
}

/** Cuts thinking, content and calls at `limit` tokens, thinking first (it counts toward num_predict). */
function generate(
  r: AnswerReply,
  text: string,
  whole: WireToolCall[],
  thinks: boolean,
  limit: number,
): Generated {
  const callText = whole
    .map(
      (c) =>
        `<tool_call>\n${JSON.stringify({ name: c.function.name, arguments: c.function.arguments })}\n</tool_call>`,
    )
    .join("");
  // Thinking is generated first and counts toward num_predict (eval_count includes it).
  const thought = thinks ? (r.thinking ?? "") : "";
  const thoughtTokens = thought ? countTokens(thought) : 0;
  const thinking = limit >= 0 && thoughtTokens > limit ? cutToTokens(thought, limit) : thought;
  const left = limit >= 0 ? Math.max(0, limit - thoughtTokens) : -1;
  const over = limit >= 0 && (thoughtTokens > limit || countTokens(text + callText) > left);
  const content = over ? cutToTokens(text, left) : text;
  return {
    thinking,
    content,
    calls: over ? [] : whole,
    over,
    tokens: over
      ? limit
      : thoughtTokens
        ? thoughtTokens + countTokens(content + callText)
        : undefined,
  };
}

/** Answers with a scripted reply: checked, cut to its budget, accounted, then sent whole or streamed. */
async function writeAnswer(r: AnswerReply, t: ReplyTarget, malformed = false): Promise<void> {
  const { res, view } = t;
  const text = r.content ?? "";
  const mistake = scriptMistake(r, view, text);
  if (mistake) return violation(t, mistake);
  if (r.delayMs) await sleep(r.delayMs);
  const whole: WireToolCall[] = (r.toolCalls ?? []).map((c, index) => ({
    id: callId(),
    function: { index, name: c.name, arguments: c.arguments },
  }));
  const limit = generationLimit(r, view);
  const g = generate(r, text, whole, t.thinks, limit);
  const { thinking, content, calls } = g;
  const record = t.account({ content, ...(calls.length ? { tool_calls: calls } : {}) }, g.tokens);
  const final = {
    ...chunk(view.body.model, {}, true),
    done_reason: g.over ? "length" : (r.doneReason ?? "stop"),
    ...metrics(record, t.machine),
  };
  if (!t.stream) {
    const message = {
      role: "assistant",
      content,
      ...(thinking ? { thinking } : {}),
      ...(calls.length ? { tool_calls: calls } : {}),
    };
    return sendJson(res, 200, { ...final, message });
  }
  return streamAnswer(r, t, g, record, final, malformed);
}

/**
 * Streams the reply as NDJSON: thinking, then content, in pieces (paced when the script says so),
 * the calls in their own line or the final one, and the final line. A client that leaves stops it,
 * and the record says after how many content pieces.
 */
async function streamAnswer(
  r: AnswerReply,
  t: ReplyTarget,
  { thinking, content, calls }: Generated,
  record: PrefillRecord,
  final: object,
  malformed: boolean,
): Promise<void> {
  const { res, view } = t;
  res.writeHead(200, { "Content-Type": "application/x-ndjson" });
  const line = (obj: unknown) => res.write(`${JSON.stringify(obj)}\n`);
  for (const [i, piece] of split(thinking, r.thinkingPieces ?? 2).entries()) {
    if (i > 0 && r.paceMs) await sleep(r.paceMs);
    if (res.destroyed) {
      record.clientLeftAfter = 0;
      return;
    }
    line(chunk(view.body.model, { thinking: piece }));
  }
  for (const [i, piece] of split(content, r.pieces ?? 3).entries()) {
    if (i > 0 && r.paceMs) await sleep(r.paceMs);
    if (res.destroyed) {
      record.clientLeftAfter = i;
      return;
    }
    line(chunk(view.body.model, { content: piece }));
    if (malformed && i === 0) res.write('{"model":"broken", "message":\n');
  }
  const native = r.placement === "native";
  if (calls.length && !native) line(chunk(view.body.model, { content: "", tool_calls: calls }));
  line(
    calls.length && native
      ? { ...final, message: { role: "assistant", content: "", tool_calls: calls } }
      : final,
  );
  res.end();
}
