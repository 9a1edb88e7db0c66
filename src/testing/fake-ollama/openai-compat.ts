/**
 * The fake Ollama's OpenAI-compatible `/v1` endpoint, as Ollama serves it: `/v1/models`, and
 * `/v1/chat/completions`, which takes no `num_ctx` — a request runs in the server's default
 * context (OLLAMA_CONTEXT_LENGTH) and a prompt over it is cut at its front and still answered
 * (docs/servers.md: ollama issue 16814). Usage is `prompt_eval_count` as `prompt_tokens`.
 */
import type { ServerResponse } from "node:http";
import { asChatBody, sendJson, writeCompletion, writeStream } from "../fake-openai/replies.js";
import type { OpenAIChatBody } from "../fake-openai/types.js";
import { countTokens, cutToTokens } from "../tokens.js";
import type { PrefillRecord } from "./prefill.js";
import { viewOf, type ChatBody, type ChatView, type FakeModel, type Reply } from "./types.js";

/** What the `/v1` handler needs of the fake it is part of. */
export interface CompatServer {
  lookup(name: string): FakeModel | undefined;
  /** The request's prefill account (the server's default context: /v1 sends no num_ctx). */
  prefill(
    model: string,
    body: ChatBody,
    contextLength: number,
  ):
    | (Omit<PrefillRecord, "generatedTokens" | "seconds"> & {
        finish(reply: { content: string }, generated?: number): PrefillRecord;
      })
    | undefined;
  reply(view: ChatView): Promise<Reply>;
  /** The request finished: the model stays loaded for its keep_alive. */
  served(model: string, keepAlive: unknown): void;
  models(): string[];
}

const openaiError = (res: ServerResponse, status: number, message: string) =>
  sendJson(res, status, {
    error: { message, type: "invalid_request_error", param: null, code: null },
  });

/** Answers `/v1/models` and `/v1/chat/completions`; false for any other route. */
export async function compatRoute(
  method: string,
  route: string,
  body: unknown,
  res: ServerResponse,
  server: CompatServer,
): Promise<boolean> {
  if (method === "GET" && route === "/v1/models") {
    sendJson(res, 200, {
      object: "list",
      data: server
        .models()
        .map((id) => ({ id, object: "model", created: 1_763_900_000, owned_by: "library" })),
    });
    return true;
  }
  if (method !== "POST" || route !== "/v1/chat/completions") return false;
  if (
    typeof body !== "object" ||
    body === null ||
    !Array.isArray((body as OpenAIChatBody).messages)
  )
    return (openaiError(res, 400, "invalid message format"), true);
  const b = body as OpenAIChatBody & { keep_alive?: unknown };
  const model = server.lookup(b.model);
  if (!model)
    return (openaiError(res, 404, `model "${b.model}" not found, try pulling it first`), true);
  const chat: ChatBody = { ...asChatBody(b), model: b.model };
  const account = server.prefill(b.model, chat, model.contextLength ?? 8192);
  if (!account) return (openaiError(res, 400, "the input length exceeds the context length"), true);
  const view = viewOf(chat, "", {
    truncated: account.truncated,
    promptTokens: account.promptTokens,
    numCtx: account.numCtx,
  });
  const reply = await server.reply(view);
  if ("fault" in reply)
    return (openaiError(res, 500, "fake-ollama: faults are not imitated on /v1"), true);
  const text = reply.content ?? "";
  const limit = b.max_completion_tokens ?? b.max_tokens;
  const cut = limit !== undefined && limit >= 0 && countTokens(text) > limit;
  const content = cut ? cutToTokens(text, limit) : text;
  const record = account.finish({ content }, cut ? limit : undefined);
  server.served(b.model, b.keep_alive);
  const completion = {
    model: b.model,
    content,
    calls: [],
    finish: cut ? "length" : "stop",
    usage: {
      prompt_tokens: record.promptTokens,
      completion_tokens: record.generatedTokens,
      total_tokens: record.promptTokens + record.generatedTokens,
    },
  };
  if (b.stream) await writeStream(res, completion, b.stream_options?.include_usage === true);
  else writeCompletion(res, completion);
  return true;
}
