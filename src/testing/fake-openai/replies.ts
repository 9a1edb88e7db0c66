/**
 * How the fake OpenAI-compatible server writes: each server's error body, JSON replies, whole
 * completions and SSE streams (chunks, tool-call deltas split in two, usage when asked), and the
 * request turned into the Ollama-shaped view scripts read.
 */
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { ChatBody, RecordedRequest, WireMessage } from "../fake-ollama/types.js";
import type { ServerKind } from "../../models/openai/quirks.js";
import type { OpenAIChatBody } from "./types.js";

/** A tool call as the server sends it. */
export type WireCall = { id: string; type: string; function: { name: string; arguments: string } };

export const id = (prefix: string) => `${prefix}${randomBytes(6).toString("hex")}`;

/** llama-server's error type for each status (its format_error_response). */
const LLAMA_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  501: "not_supported_error",
  503: "unavailable_error",
};

/** The body each server sends with an error status; `extra` adds to (or sets the type of) llama.cpp's. */
export function errorBody(
  server: ServerKind,
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
): unknown {
  if (server === "vllm")
    return { object: "error", message, type: "BadRequestError", param: null, code: status };
  if (server === "llama.cpp")
    return {
      error: {
        code: status,
        message,
        type: LLAMA_ERROR_TYPES[status] ?? "server_error",
        ...extra,
      },
    };
  return { error: { message, type: "invalid_request_error", param: null, code: null } };
}

export function sendJson(res: ServerResponse, status: number, obj: unknown): void {
  const text = JSON.stringify(obj);
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
  res.end(text);
}

/** An error status with the body `server` sends for it. */
export function sendError(
  res: ServerResponse,
  server: ServerKind,
  status: number,
  message: string,
  extra?: Record<string, unknown>,
): void {
  sendJson(res, status, errorBody(server, status, message, extra));
}

/** llama-server's 500 when the requests in flight do not fit its KV cache together. */
const CONTEXT_FULL = "Context size has been exceeded.";

/** No room in the shared KV cache: a 500, or for a stream (already answered 200) its error event. */
export function sendNoRoom(
  res: ServerResponse,
  server: ServerKind,
  stream: boolean,
  recorded: RecordedRequest,
): void {
  if (!stream) return sendError(res, server, 500, CONTEXT_FULL);
  recorded.streamedError = CONTEXT_FULL;
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  res.end(`data: ${JSON.stringify(errorBody(server, 500, CONTEXT_FULL))}\n\n`);
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
  /** How many stream chunks the reasoning is split into (default 1). */
  thinkingPieces?: number;
  /** llama-server's `timings`: on the usage chunk, or on the finish chunk when usage was not asked. */
  timings?: Record<string, number>;
  /** Milliseconds between content chunks (a server generating as it sends). */
  paceMs?: number;
  /** The `content` of a message that only calls tools (default null; llama-server sends ""). */
  contentWithCalls?: "" | null;
}

/** A whole (non-streamed) chat completion. */
export function writeCompletion(
  res: ServerResponse,
  { id: fixed, model, content, thinking, calls, finish, usage, ...rest }: Completion,
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
          content: content || (calls.length ? (rest.contentWithCalls ?? null) : ""),
          ...(thinking ? { reasoning_content: thinking } : {}),
          ...(calls.length ? { tool_calls: calls } : {}),
        },
        finish_reason: finish,
      },
    ],
    usage,
    ...(rest.timings ? { timings: rest.timings } : {}),
  });
}

/**
 * The completion as server-sent events, the way llama.cpp, vLLM and LM Studio stream it; the usage
 * chunk only when the request asked for it (`stream_options.include_usage`). Returns the number of
 * content pieces sent when the client left before the end (a real server stops generating then).
 */
export async function writeStream(
  res: ServerResponse,
  { id: fixed, model, content, thinking, calls, finish, usage, pieces: parts, ...rest }: Completion,
  includeUsage: boolean,
): Promise<number | undefined> {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  const chatId = fixed ?? id("chatcmpl-");
  const created = Math.floor(Date.now() / 1000);
  const event = (delta: unknown, finishReason: string | null = null, more: object = {}) =>
    res.write(
      `data: ${JSON.stringify({
        id: chatId,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finishReason }],
        ...more,
      })}\n\n`,
    );
  event({ role: "assistant", content: "" });
  if (thinking) {
    const size = Math.ceil(thinking.length / Math.max(1, rest.thinkingPieces ?? 1)) || 1;
    for (let i = 0; i < thinking.length; i += size) {
      if (i > 0 && rest.paceMs) await new Promise((r) => setTimeout(r, rest.paceMs));
      if (res.destroyed) return 0;
      event({ reasoning_content: thinking.slice(i, i + size) });
    }
  }
  const pieces = Math.max(1, parts ?? 3);
  const size = Math.ceil(content.length / pieces) || 1;
  for (let i = 0; i < content.length; i += size) {
    if (i > 0 && rest.paceMs) await new Promise((r) => setTimeout(r, rest.paceMs));
    if (res.destroyed) return i / size;
    event({ content: content.slice(i, i + size) });
  }
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
  const timings = rest.timings ? { timings: rest.timings } : {};
  event({}, finish, includeUsage ? {} : timings);
  if (includeUsage)
    res.write(
      `data: ${JSON.stringify({ id: chatId, object: "chat.completion.chunk", created, model, choices: [], usage, ...timings })}\n\n`,
    );
  res.write("data: [DONE]\n\n");
  res.end();
  return undefined;
}

/** LM Studio's `/api/v0/models/<id>`: the loaded context and whether the model takes tools. */
export function lmStudioModel(name: string, m: { contextLength?: number; tools?: boolean }) {
  return {
    id: name,
    object: "model",
    type: "llm",
    arch: "qwen2",
    state: "loaded",
    max_context_length: 131072,
    loaded_context_length: m.contextLength ?? 8192,
    capabilities: m.tools === false ? [] : ["tool_use"],
  };
}
