/**
 * A front for a real model server: a loopback HTTP server that passes every chat request an agent
 * sends to the real server for prefill only (llama-server: `max_tokens: 1`; Ollama:
 * `num_predict: 1`), records the server's own counts for it, and answers the agent from a script
 * (the scripted model's next tool call) with the server's real prompt counts in the usage. A weak
 * model cannot drive an 80-turn task; this way the real server still prefills every request the
 * agent makes, with its own tokenizer, chat template, slots and KV cache.
 *
 * What is read per request:
 *   llama-server  `timings.cache_n` (prompt tokens taken from the slot's cache), `timings.prompt_n`
 *                 (tokens evaluated) and `timings.prompt_ms`; `usage.prompt_tokens_details.cached_tokens`
 *                 is kept to cross-check.
 *   Ollama        `prompt_eval_count` and `prompt_eval_duration`. How many of those were cached is
 *                 derived by the caller (see real-ollama.ts): Ollama does not report it.
 * Every other route (discovery: `/v1/models`, `/props`, `/api/show`, …) is passed through as is.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { readBody } from "../src/testing/http.js";
import {
  viewOf,
  type ChatBody,
  type Reply,
  type Script,
} from "../src/testing/fake-ollama/types.js";
import {
  asChatBody,
  id,
  writeCompletion,
  writeStream,
} from "../src/testing/fake-openai/replies.js";
import type { OpenAIChatBody } from "../src/testing/fake-openai/server.js";

/** One request as the real server counted it. */
export interface FrontRecord {
  /** A structured request (keel's intent or plan call) rather than a model turn. */
  structured: boolean;
  /** HTTP status of the real server's answer (a refused prompt is not prefilled). */
  status: number;
  error?: string;
  /** Prompt tokens (cached + evaluated). */
  promptTokens: number;
  /** Prompt tokens served from the cache (Ollama: derived, see the module comment). */
  cachedTokens: number;
  /** `usage.prompt_tokens_details.cached_tokens` as llama-server reported it. */
  reportedCached?: number;
  /** Milliseconds the server spent evaluating the prompt. */
  promptMs: number;
  /** The request's messages and tools as sent (for the ceiling, see real-prefill.ts). */
  body: Record<string, unknown>;
}

export interface Front {
  /** The root clients are given: the OpenAI `/v1` root, or Ollama's root. */
  url: string;
  records: FrontRecord[];
  close(): Promise<void>;
}

export interface FrontOptions {
  /** The real server's root (no `/v1`). */
  upstream: string;
  kind: "llama.cpp" | "ollama";
  script: Script;
  /** Changes a llama-server prefill request before it is sent (e.g. adds `id_slot`). */
  rewrite?: (body: Record<string, unknown>) => void;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8" });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
};

/** Passes a request through to the real server unchanged. */
async function pass(upstream: string, req: IncomingMessage, raw: string, res: ServerResponse) {
  const r = await fetch(`${upstream}${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers: { "Content-Type": "application/json" },
    ...(req.method === "GET" || req.method === "HEAD" ? {} : { body: raw }),
  });
  const text = await r.text();
  res.writeHead(r.status, { "Content-Type": r.headers.get("content-type") ?? "text/plain" });
  res.end(text);
}

/** Starts the front on 127.0.0.1 with an OS-assigned port. */
export async function startFront(o: FrontOptions): Promise<Front> {
  const records: FrontRecord[] = [];
  const chatPath = o.kind === "ollama" ? "/api/chat" : "/v1/chat/completions";

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const { raw, body } = await readBody(req);
    const route = new URL(req.url ?? "/", "http://x").pathname;
    if (req.method !== "POST" || route !== chatPath) return pass(o.upstream, req, raw, res);
    const b = body as Record<string, unknown>;
    if (o.kind === "ollama") return ollamaChat(b, res);
    return llamaChat(b as unknown as OpenAIChatBody, res);
  };

  const llamaChat = async (b: OpenAIChatBody, res: ServerResponse) => {
    const chat = asChatBody(b);
    const structured = chat.format !== undefined;
    const prefill = { ...b, stream: false, max_tokens: 1 } as Record<string, unknown>;
    delete prefill.stream_options;
    o.rewrite?.(prefill);
    const r = await fetch(`${o.upstream}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(prefill),
    });
    const text = await r.text();
    if (!r.ok) {
      records.push({ ...failed(r.status, text), structured, body: bodyOf(b) });
      return json(res, r.status, text); // the agent sees the real server's refusal
    }
    const answer = JSON.parse(text) as {
      usage?: { prompt_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
      // (a server without timings, such as the fakes: the usage's count, nothing cached)
      timings?: { cache_n?: number; prompt_n?: number; prompt_ms?: number };
    };
    const t = answer.timings ?? {};
    const cached = t.cache_n ?? 0;
    const record: FrontRecord = {
      structured,
      status: 200,
      promptTokens:
        t.prompt_n !== undefined ? cached + t.prompt_n : (answer.usage?.prompt_tokens ?? 0),
      cachedTokens: cached,
      ...(answer.usage?.prompt_tokens_details?.cached_tokens !== undefined
        ? { reportedCached: answer.usage.prompt_tokens_details.cached_tokens }
        : {}),
      promptMs: t.prompt_ms ?? 0,
      body: bodyOf(b),
    };
    records.push(record);
    const reply = await o.script(viewOf(chat, "", { truncated: false, promptTokens: 0 }));
    const a = answerOf(reply);
    const calls = a.calls.map((c) => ({
      id: id("call_"),
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
    const usage = {
      prompt_tokens: record.promptTokens,
      completion_tokens: 8,
      total_tokens: record.promptTokens + 8,
      prompt_tokens_details: { cached_tokens: record.cachedTokens },
    };
    const completion = {
      model: b.model,
      content: a.content,
      calls,
      finish: calls.length ? "tool_calls" : "stop",
      // (the fake's writers type usage flat; the nested cached count is written as is)
      usage: usage as unknown as Record<string, number>,
    };
    if (b.stream) await writeStream(res, completion, b.stream_options?.include_usage === true);
    else writeCompletion(res, completion);
  };

  const ollamaChat = async (b: Record<string, unknown>, res: ServerResponse) => {
    const chat = b as unknown as ChatBody;
    const structured = chat.format !== undefined && chat.format !== null && chat.format !== "";
    const options = { ...((b.options as Record<string, unknown>) ?? {}), num_predict: 1 };
    const r = await fetch(`${o.upstream}/api/chat`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...b, stream: false, options }),
    });
    const text = await r.text();
    if (!r.ok) {
      records.push({ ...failed(r.status, text), structured, body: bodyOf(b) });
      return json(res, r.status, text);
    }
    const answer = JSON.parse(text) as {
      prompt_eval_count?: number;
      prompt_eval_duration?: number;
    };
    const record: FrontRecord = {
      structured,
      status: 200,
      promptTokens: answer.prompt_eval_count ?? 0,
      cachedTokens: 0, // filled in by the caller from the runner's log
      promptMs: (answer.prompt_eval_duration ?? 0) / 1e6,
      body: bodyOf(b),
    };
    records.push(record);
    const reply = await o.script(viewOf(chat, "", { truncated: false, promptTokens: 0 }));
    const a = answerOf(reply);
    const message = {
      role: "assistant",
      content: a.content,
      ...(a.calls.length
        ? {
            tool_calls: a.calls.map((c, index) => ({
              id: `call_${randomBytes(4).toString("hex")}`,
              function: { index, name: c.name, arguments: c.arguments },
            })),
          }
        : {}),
    };
    const at = new Date().toISOString();
    const done = {
      model: chat.model,
      created_at: at,
      message: { role: "assistant", content: "" },
      done: true,
      done_reason: "stop",
      total_duration: (answer.prompt_eval_duration ?? 0) + 1000,
      load_duration: 1000,
      prompt_eval_count: record.promptTokens,
      prompt_eval_duration: answer.prompt_eval_duration ?? 0,
      eval_count: 8,
      eval_duration: 1000,
    };
    if (chat.stream === false) {
      return json(res, 200, { ...done, message });
    }
    res.writeHead(200, { "Content-Type": "application/x-ndjson" });
    res.write(`${JSON.stringify({ model: chat.model, created_at: at, message, done: false })}\n`);
    res.end(`${JSON.stringify(done)}\n`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 502, { error: `front: ${(err as Error).message}` });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: o.kind === "ollama" ? root : `${root}/v1`,
    records,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const failed = (status: number, text: string) => ({
  status,
  error: text.slice(0, 300),
  promptTokens: 0,
  cachedTokens: 0,
  promptMs: 0,
});

const bodyOf = (b: object): Record<string, unknown> => {
  const { messages, tools } = b as { messages?: unknown; tools?: unknown };
  return { messages, ...(tools ? { tools } : {}) };
};

/** A scripted reply as content and calls (the front imitates no faults). */
function answerOf(reply: Reply): {
  content: string;
  calls: Array<{ name: string; arguments: unknown }>;
} {
  if ("fault" in reply) throw new Error(`the front does not imitate faults (${reply.fault})`);
  return {
    content: reply.content ?? "",
    calls: (reply.toolCalls ?? []).map((c) => ({
      name: c.name,
      arguments:
        typeof c.arguments === "string" ? (JSON.parse(c.arguments) as unknown) : c.arguments,
    })),
  };
}
