/**
 * A fake Ollama server: a real HTTP server on 127.0.0.1 that speaks Ollama's native API as
 * ollama-protocol.md §9 describes, and replays scripted model behaviour. Scripts are reactive: they
 * decide each reply from the request (the conversation so far), so a test can express a model that
 * makes a mistake and recovers only when it is told. Every request is recorded for assertions.
 * It powers the test suite and `keel demo`; whatever it answers is scripted, never a real model.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Capability = "completion" | "tools" | "thinking" | "vision" | "embedding" | "insert";

export interface FakeModel {
  capabilities: Capability[];
  family?: string;
  contextLength?: number;
}

export interface WireToolCall {
  id?: string;
  type?: string;
  function: { index?: number; name: string; arguments: unknown };
}

export interface WireMessage {
  role: string;
  content: string;
  thinking?: string;
  tool_calls?: WireToolCall[];
  tool_name?: string;
  tool_call_id?: string;
  images?: string[];
}

export interface ChatBody {
  model: string;
  messages?: WireMessage[];
  stream?: boolean;
  format?: unknown;
  tools?: Array<{
    type: string;
    function: { name: string; description?: string; parameters?: Record<string, unknown> };
  }>;
  options?: Record<string, unknown>;
  think?: unknown;
  keep_alive?: unknown;
}

/** What a script sees of one chat request. */
export interface ChatView {
  body: ChatBody;
  messages: WireMessage[];
  /** The request asks for structured output (`format` set). */
  structured: boolean;
  /** Top-level property names of the `format` schema, when it is one. */
  formatKeys: string[];
  /** Names of the tools in the request. */
  toolNames: string[];
  /** Assistant messages already in the conversation: 0 on the first turn. */
  turn: number;
  /** The tool messages after the last assistant message (the results the model is reacting to). */
  toolResults: WireMessage[];
  /** The last message of the conversation. */
  last: WireMessage | undefined;
  /** The text of all user messages, joined. */
  userText: string;
  /** The path prefix the client used before /api (per-test routing). */
  prefix: string;
}

export interface ScriptedCall {
  name: string;
  /** An object, as Ollama sends; a string imitates servers that send JSON text. */
  arguments: Record<string, unknown> | string;
}

/** A normal reply. */
export interface AnswerReply {
  content?: string;
  thinking?: string;
  toolCalls?: ScriptedCall[];
  /** classic: calls in their own done:false line; native: calls in the final line. */
  placement?: "classic" | "native";
  /** How many stream lines the content is split into (default 3). */
  pieces?: number;
  doneReason?: "stop" | "length";
  /** Wait this long before the first byte. */
  delayMs?: number;
  /** Imitate servers that return calls to tools the request did not offer. */
  allowUnknownTools?: boolean;
  /** Send content that is not valid JSON even though `format` was set. */
  allowInvalidJson?: boolean;
}

export type FaultReply =
  | { fault: "status"; status: number; error: string; delayMs?: number }
  | { fault: "reset-before" }
  | { fault: "cut-mid-stream" }
  | { fault: "no-done" }
  | { fault: "stream-error"; error: string }
  | { fault: "hang" }
  | { fault: "malformed-line"; then: AnswerReply };

export type Reply = AnswerReply | FaultReply;
export type Script = (req: ChatView) => Reply | Promise<Reply>;

export interface RecordedRequest {
  method: string;
  path: string;
  prefix: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, or the raw text when it did not parse. */
  body: unknown;
  at: number;
}

export interface FakeOllamaOptions {
  models?: Record<string, FakeModel>;
  script?: Script;
}

export interface FakeOllama {
  /** Base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  requests: RecordedRequest[];
  /** The POST /api/chat requests, in order. */
  chatRequests(): RecordedRequest[];
  /** Chat request bodies, optionally only those from model turns (no `format`). */
  chatBodies(opts?: { turnsOnly?: boolean }): ChatBody[];
  /** Script mistakes the fake caught (e.g. a call to a tool the request did not offer). */
  violations: string[];
  setScript(script: Script): void;
  /** The next chat requests get these replies, in order, before the script is asked again. */
  inject(...replies: Reply[]): void;
  /** Runs when a chat request arrives, before it is answered (e.g. to kill a client at turn k). */
  onChat(hook: ((req: ChatView, index: number) => void) | undefined): void;
  close(): Promise<void>;
}

export const DEFAULT_FAKE_MODELS: Record<string, FakeModel> = {
  "qwen3:8b": {
    capabilities: ["completion", "tools", "thinking"],
    family: "qwen3",
    contextLength: 40960,
  },
  "llama3.1:8b": { capabilities: ["completion", "tools"], family: "llama", contextLength: 131072 },
  "gemma3:4b": { capabilities: ["completion", "vision"], family: "gemma3", contextLength: 131072 },
  "nomic-embed-text": { capabilities: ["embedding"], family: "nomic-bert", contextLength: 2048 },
};

const callId = () =>
  `call_${Array.from(randomBytes(8), (b) => "abcdefghijklmnopqrstuvwxyz0123456789"[b % 36]).join("")}`;
const now = () => new Date().toISOString().replace(/(\.\d{3})Z$/, "$1000Z");

function withTag(name: string): string {
  return name.includes(":") ? name : `${name}:latest`;
}

function lookupModel(models: Record<string, FakeModel>, name: string): FakeModel | undefined {
  return (
    models[name] ??
    models[withTag(name)] ??
    (name.endsWith(":latest") ? models[name.slice(0, -7)] : undefined)
  );
}

export function viewOf(body: ChatBody, prefix: string): ChatView {
  const messages = body.messages ?? [];
  let lastAssistant = -1;
  messages.forEach((m, i) => {
    if (m.role === "assistant") lastAssistant = i;
  });
  const format = body.format;
  return {
    body,
    messages,
    structured: format !== undefined && format !== null && format !== "",
    formatKeys:
      format && typeof format === "object"
        ? Object.keys((format as { properties?: object }).properties ?? {})
        : [],
    toolNames: (body.tools ?? []).map((t) => t.function.name),
    turn: messages.filter((m) => m.role === "assistant").length,
    toolResults:
      lastAssistant >= 0 ? messages.slice(lastAssistant + 1).filter((m) => m.role === "tool") : [],
    last: messages[messages.length - 1],
    userText: messages
      .filter((m) => m.role === "user")
      .map((m) => m.content)
      .join("\n"),
    prefix,
  };
}

function streamChunk(model: string, message: Partial<WireMessage>, done = false) {
  return {
    model,
    created_at: now(),
    message: { role: "assistant", content: "", ...message },
    done,
  };
}

function sendJson(res: ServerResponse, status: number, obj: unknown): void {
  const text = JSON.stringify(obj);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, error: string): void {
  sendJson(res, status, { error });
}

function metrics(prompt: number, evalCount: number) {
  return {
    total_duration: 182_242_375,
    load_duration: 41_295_167,
    prompt_eval_count: Math.max(1, prompt),
    prompt_eval_duration: 24_573_166,
    eval_count: Math.max(1, evalCount),
    eval_duration: 115_959_084,
  };
}

function split(text: string, pieces: number): string[] {
  if (!text) return [];
  const n = Math.max(1, Math.min(pieces, text.length));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Starts a fake Ollama server on 127.0.0.1 with an OS-assigned port. */
export async function startFakeOllama(opts: FakeOllamaOptions = {}): Promise<FakeOllama> {
  const models = opts.models ?? DEFAULT_FAKE_MODELS;
  let script: Script = opts.script ?? (() => ({ content: "Hello from the scripted fake model." }));
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];
  const open = new Set<ServerResponse>();
  let chatHook: ((req: ChatView, index: number) => void) | undefined;
  let chatCount = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", "http://x");
    const apiAt = url.pathname.indexOf("/api/");
    const prefix = apiAt > 0 ? url.pathname.slice(0, apiAt) : "";
    const route = apiAt >= 0 ? url.pathname.slice(apiAt) : url.pathname;
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    requests.push({
      method: req.method ?? "GET",
      path: url.pathname,
      prefix,
      headers: req.headers,
      body,
      at: Date.now(),
    });

    if ((req.method === "GET" || req.method === "HEAD") && (route === "/" || route === "")) {
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
      res.end(req.method === "HEAD" ? undefined : "Ollama is running");
      return;
    }
    if (req.method === "GET" && route === "/api/version")
      return sendJson(res, 200, { version: "0.12.10" });
    if (req.method === "GET" && route === "/api/tags") {
      return sendJson(res, 200, {
        models: Object.entries(models).map(([name, m]) => ({
          name: withTag(name),
          model: withTag(name),
          modified_at: "2026-11-01T10:00:00.000000Z",
          size: 4_920_753_328,
          digest: "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
          details: {
            parent_model: "",
            format: "gguf",
            family: m.family ?? "llama",
            families: [m.family ?? "llama"],
            parameter_size: "8B",
            quantization_level: "Q4_K_M",
          },
        })),
      });
    }
    if (req.method === "POST" && route === "/api/show") {
      if (typeof body !== "object" || body === null)
        return sendError(res, 400, "missing request body");
      const name =
        (body as { model?: string; name?: string }).model ?? (body as { name?: string }).name;
      if (!name) return sendError(res, 400, "model is required");
      const m = lookupModel(models, name);
      if (!m) return sendError(res, 404, `model '${name}' not found`);
      const family = m.family ?? "llama";
      return sendJson(res, 200, {
        modelfile: `FROM ${name}`,
        parameters: "temperature 0.6",
        template: m.capabilities.includes("tools")
          ? "{{- if .Tools }}<tools>{{ .Tools }}</tools>{{ end }}{{ .Prompt }}"
          : "{{ .Prompt }}",
        details: {
          parent_model: "",
          format: "gguf",
          family,
          families: [family],
          parameter_size: "8B",
          quantization_level: "Q4_K_M",
        },
        model_info: {
          "general.architecture": family,
          [`${family}.context_length`]: m.contextLength ?? 8192,
        },
        capabilities: m.capabilities,
        modified_at: "2026-11-01T10:00:00.000000Z",
      });
    }
    if (req.method === "POST" && route === "/api/chat") return chat(raw, body, prefix, res);
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end("404 page not found");
  };

  const chat = async (raw: string, body: unknown, prefix: string, res: ServerResponse) => {
    if (!raw) return sendError(res, 400, "missing request body");
    if (typeof body !== "object" || body === null) {
      return sendError(
        res,
        400,
        `invalid character '${raw.trim()[0] ?? ""}' looking for beginning of value`,
      );
    }
    const b = body as ChatBody;
    if (b.messages !== undefined && !Array.isArray(b.messages)) {
      return sendError(
        res,
        400,
        `json: cannot unmarshal ${typeof b.messages} into Go struct field ChatRequest.messages of type []api.Message`,
      );
    }
    if (!b.model) return sendError(res, 400, "model is required");
    const model = lookupModel(models, b.model);
    if (!model) return sendError(res, 404, `model '${b.model}' not found`);
    if (!model.capabilities.includes("completion"))
      return sendError(res, 400, `"${b.model}" does not support chat`);
    if (b.tools?.length && !model.capabilities.includes("tools")) {
      return sendError(
        res,
        400,
        `registry.ollama.ai/library/${withTag(b.model)} does not support tools`,
      );
    }
    if (b.think && b.think !== false && !model.capabilities.includes("thinking")) {
      return sendError(res, 400, `"${b.model}" does not support thinking`);
    }
    const view = viewOf(b, prefix);
    chatHook?.(view, chatCount++);
    const reply = queue.length ? queue.shift()! : await script(view);
    const stream = b.stream !== false;
    const thinks = model.capabilities.includes("thinking") && b.think !== false;
    await answer(reply, view, stream, thinks, res);
  };

  const answer = async (
    reply: Reply,
    view: ChatView,
    stream: boolean,
    thinks: boolean,
    res: ServerResponse,
  ) => {
    const line = (obj: unknown) => res.write(`${JSON.stringify(obj)}\n`);
    const base = (message: Partial<WireMessage>) => streamChunk(view.body.model, message);
    if ("fault" in reply) {
      switch (reply.fault) {
        case "status":
          if (reply.delayMs) await sleep(reply.delayMs);
          return sendError(res, reply.status, reply.error);
        case "reset-before":
          res.socket?.destroy();
          return;
        case "hang":
          open.add(res);
          return;
        case "cut-mid-stream":
          res.writeHead(200, { "Content-Type": "application/x-ndjson" });
          line(base({ content: "Let me" }));
          await sleep(20);
          res.socket?.destroy();
          return;
        case "no-done":
          res.writeHead(200, { "Content-Type": "application/x-ndjson" });
          line(base({ content: "Partial answer" }));
          res.end();
          return;
        case "stream-error":
          res.writeHead(200, { "Content-Type": "application/x-ndjson" });
          line(base({ content: "Work" }));
          line({ error: reply.error });
          res.end();
          return;
        case "malformed-line":
          return respond(
            { ...reply.then, pieces: reply.then.pieces ?? 2 },
            view,
            stream,
            thinks,
            res,
            true,
          );
      }
    }
    return respond(reply, view, stream, thinks, res);
  };

  const respond = async (
    r: AnswerReply,
    view: ChatView,
    stream: boolean,
    thinks: boolean,
    res: ServerResponse,
    malformed = false,
  ) => {
    const content = r.content ?? "";
    for (const c of r.toolCalls ?? []) {
      if (!r.allowUnknownTools && !view.toolNames.includes(c.name)) {
        const why = `script called tool "${c.name}" which the request did not offer (offered: ${view.toolNames.join(", ") || "none"})`;
        violations.push(why);
        return sendError(res, 500, `fake-ollama: ${why}`);
      }
    }
    if (view.structured && !r.allowInvalidJson) {
      try {
        JSON.parse(content);
      } catch {
        const why = `script answered a structured request with content that is not JSON: ${content.slice(0, 80)}`;
        violations.push(why);
        return sendError(res, 500, `fake-ollama: ${why}`);
      }
    }
    if (r.delayMs) await sleep(r.delayMs);
    const calls: WireToolCall[] = (r.toolCalls ?? []).map((c, index) => ({
      id: callId(),
      function: { index, name: c.name, arguments: c.arguments },
    }));
    const thinking = thinks ? (r.thinking ?? "") : "";
    const promptTokens = JSON.stringify(view.messages).length >> 2;
    const evalTokens = (content.length >> 2) + calls.length * 12 + 1;
    const final = {
      ...streamChunk(view.body.model, {}, true),
      done_reason: r.doneReason ?? "stop",
      ...metrics(promptTokens, evalTokens),
    };
    const base2 = (message: Partial<WireMessage>) => streamChunk(view.body.model, message);
    if (!stream) {
      return sendJson(res, 200, {
        ...final,
        message: {
          role: "assistant",
          content,
          ...(thinking ? { thinking } : {}),
          ...(calls.length ? { tool_calls: calls } : {}),
        },
      });
    }
    res.writeHead(200, { "Content-Type": "application/x-ndjson" });
    const line = (obj: unknown) => res.write(`${JSON.stringify(obj)}\n`);
    for (const t of split(thinking, 2)) line(base2({ thinking: t }));
    const pieces = split(content, r.pieces ?? 3);
    pieces.forEach((p, i) => {
      line(base2({ content: p }));
      if (malformed && i === 0) res.write('{"model":"broken", "message":\n');
    });
    if (calls.length && (r.placement ?? "classic") === "classic")
      line(base2({ content: "", tool_calls: calls }));
    if (calls.length && r.placement === "native")
      line({ ...final, message: { role: "assistant", content: "", tool_calls: calls } });
    else line(final);
    res.end();
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, `fake-ollama: ${(err as Error).message}`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const chatRequests = () =>
    requests.filter((r) => r.method === "POST" && r.path.endsWith("/api/chat"));
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    violations,
    chatRequests,
    chatBodies: (o) =>
      chatRequests()
        .map((r) => r.body as ChatBody)
        .filter((b) => !o?.turnsOnly || b.format === undefined),
    setScript: (s) => {
      script = s;
    },
    inject: (...replies) => {
      queue.push(...replies);
    },
    onChat: (hook) => {
      chatHook = hook;
    },
    close: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
