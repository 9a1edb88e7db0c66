/**
 * How the fake OpenAI-compatible server writes: each server's error body, JSON replies, whole
 * completions and SSE streams (chunks, tool-call deltas split in two, usage when asked), and the
 * request turned into the Ollama-shaped view scripts read.
 */
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { ChatBody, WireMessage } from "../fake-ollama/types.js";
import type { ServerKind } from "../../models/openai/quirks.js";
import type { OpenAIChatBody } from "./server.js";

/** A tool call as the server sends it. */
export type WireCall = { id: string; type: string; function: { name: string; arguments: string } };

export const id = (prefix: string) => `${prefix}${randomBytes(6).toString("hex")}`;

/** The body each server sends with an error status. */
export function errorBody(server: ServerKind, status: number, message: string): unknown {
  if (server === "vllm")
    return { object: "error", message, type: "BadRequestError", param: null, code: status };
  if (server === "llama.cpp")
    return {
      error: {
        code: status,
        message,
        type: status >= 500 ? "server_error" : "invalid_request_error",
      },
    };
  return { error: { message, type: "invalid_request_error", param: null, code: null } };
}

export function sendJson(res: ServerResponse, status: number, obj: unknown): void {
  const text = JSON.stringify(obj);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
  res.end(text);
}

/** The request as a script sees it: Ollama's shape (arguments as objects, tools by name). */
export function asChatBody(b: OpenAIChatBody): ChatBody {
  const names = new Map<string, string>();
  const messages: WireMessage[] = b.messages.map((m) => {
    const content =
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p) => p.text ?? "").join("")
          : "";
    const out: WireMessage = { role: m.role, content };
    if (m.tool_calls?.length) {
      out.tool_calls = m.tool_calls.map((c) => {
        names.set(c.id, c.function.name);
        let args: unknown = c.function.arguments;
        try {
          args = JSON.parse(c.function.arguments);
        } catch {
          // arguments a client sent as text stay text
        }
        return { id: c.id, function: { name: c.function.name, arguments: args } };
      });
    }
    if (m.tool_call_id) {
      out.tool_call_id = m.tool_call_id;
      const name = names.get(m.tool_call_id);
      if (name) out.tool_name = name;
    }
    if (m.reasoning_content) out.thinking = m.reasoning_content;
    return out;
  });
  const schema = b.response_format?.json_schema?.schema;
  return {
    model: b.model,
    messages,
    ...(b.tools ? { tools: b.tools } : {}),
    ...(schema
      ? { format: schema }
      : b.response_format?.type === "json_object"
        ? { format: "json" }
        : {}),
    stream: b.stream === true,
  };
}

/** One answer as the server sends it, streamed or whole. */
export interface Completion {
  /** The completion's id (default: a fresh one). */
  id?: string;
  model: string;
  content: string;
  thinking?: string;
  calls: WireCall[];
  finish: string;
  usage: Record<string, unknown>;
  /** How many stream chunks the content is split into (default 3). */
  pieces?: number;
}

/** A whole (non-streamed) chat completion. */
export function writeCompletion(
  res: ServerResponse,
  { id: fixed, model, content, thinking, calls, finish, usage }: Completion,
): void {
  sendJson(res, 200, {
    id: fixed ?? id("chatcmpl-"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: content || (calls.length ? null : ""),
          ...(thinking ? { reasoning_content: thinking } : {}),
          ...(calls.length ? { tool_calls: calls } : {}),
        },
        finish_reason: finish,
      },
    ],
    usage,
  });
}

/**
 * The completion as server-sent events, the way llama.cpp, vLLM and LM Studio stream it; the usage
 * chunk only when the request asked for it (`stream_options.include_usage`).
 */
export function writeStream(
  res: ServerResponse,
  { id: fixed, model, content, thinking, calls, finish, usage, pieces: parts }: Completion,
  includeUsage: boolean,
): void {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  const chatId = fixed ?? id("chatcmpl-");
  const created = Math.floor(Date.now() / 1000);
  const event = (delta: unknown, finishReason: string | null = null) =>
    res.write(
      `data: ${JSON.stringify({
        id: chatId,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finishReason }],
      })}\n\n`,
    );
  event({ role: "assistant", content: "" });
  if (thinking) event({ reasoning_content: thinking });
  const pieces = Math.max(1, parts ?? 3);
  const size = Math.ceil(content.length / pieces) || 1;
  for (let i = 0; i < content.length; i += size) event({ content: content.slice(i, i + size) });
  calls.forEach((c, index) => {
    event({
      tool_calls: [
        { index, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } },
      ],
    });
    const half = Math.ceil(c.function.arguments.length / 2);
    for (const part of [c.function.arguments.slice(0, half), c.function.arguments.slice(half)])
      if (part) event({ tool_calls: [{ index, function: { arguments: part } }] });
  });
  event({}, finish);
  if (includeUsage)
    res.write(
      `data: ${JSON.stringify({ id: chatId, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`,
    );
  res.write("data: [DONE]\n\n");
  res.end();
}
