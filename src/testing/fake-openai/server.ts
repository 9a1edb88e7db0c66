/**
 * A fake OpenAI-compatible server: a real HTTP server on 127.0.0.1 that speaks `/v1/chat/completions`
 * (SSE streaming and plain JSON) and `/v1/models` the way llama.cpp, LM Studio, vLLM and
 * mlx_lm.server do, each with its own discovery endpoints and quirks (docs/servers.md): llama.cpp's
 * `/props` and `500 tools param requires --jinja flag`, vLLM's `max_model_len` and its auto tool
 * choice error, LM Studio's `/api/v0/models`, servers that reject `stream_options`, and a prompt over
 * the context refused with the server's own 400 (these servers do not cut it silently). Replies come
 * from the same scripts as the fake Ollama (the request is shown to them as a `ChatView`), so a
 * scenario runs against both.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { MACHINES } from "../fake-ollama/prefill.js";
import { sleep } from "../fake-ollama/replies.js";
import { viewOf, type RecordedRequest, type Reply, type Script } from "../fake-ollama/types.js";
import { readBody } from "../http.js";
import { countTokens, cutToTokens } from "../tokens.js";
import {
  applyTemplate,
  cutReply,
  generatedText,
  llamaId,
  llamaModels,
  llamaRoute,
  overContext,
  timings,
  wrongField,
} from "./llamacpp.js";
import {
  asChatBody,
  errorBody,
  lmStudioModel,
  id,
  sendJson,
  writeCompletion,
  writeStream,
  type Completion,
} from "./replies.js";
import { Slots } from "./slots.js";

export type { FakeOpenAI, FakeOpenAIModel, FakeOpenAIOptions, OpenAIChatBody } from "./types.js";
import type { FakeOpenAI, FakeOpenAIModel, FakeOpenAIOptions, OpenAIChatBody } from "./types.js";

export const DEFAULT_OPENAI_MODELS: Record<string, FakeOpenAIModel> = {
  "qwen2.5-coder-7b-instruct": {
    contextLength: 32768,
    template:
      "{%- if tools %}<|im_start|>system\n<tools>{{ tools }}</tools> Return <tool_call>{...}</tool_call>{%- endif %}",
    tools: true,
  },
  "llama-3.2-3b-instruct": {
    contextLength: 8192,
    template: "{{- '<|start_header_id|>' }}{%- if tools %}{{ tools }}{% endif %}",
    tools: true,
  },
};

/** mlx_lm.server names models by their Hugging Face repository. */
export const DEFAULT_MLX_MODELS: Record<string, FakeOpenAIModel> = {
  "mlx-community/Qwen2.5-Coder-7B-Instruct-4bit": { contextLength: 32768, tools: true },
};

/** llama-server's 500 when the requests in flight do not fit its KV cache together. */
const CONTEXT_FULL = "Context size has been exceeded.";

/** Starts the fake on 127.0.0.1 with an OS-assigned port. */
export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const kind = opts.server ?? "llama.cpp";
  const models = opts.models ?? (kind === "mlx" ? DEFAULT_MLX_MODELS : DEFAULT_OPENAI_MODELS);
  const rejectStreamOptions = opts.rejectStreamOptions ?? (kind === "generic" || kind === "mlx");
  let script: Script = opts.script ?? (() => ({ content: "Hello from the scripted fake model." }));
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];
  const answers: FakeOpenAI["answers"] = [];
  const hanging = new Set<ServerResponse>();
  const llama = kind === "llama.cpp";
  const slotCount = llama ? (opts.slots ?? 4) : 1;
  const [served, servedModel] = Object.entries(models)[0]!;
  const cpt = servedModel.charsPerToken;
  const count = cpt ? (text: string) => Math.ceil(text.length / cpt) : countTokens;
  // Without -np, llama-server shares one KV cache among its slots (`kv_unified`).
  const unifiedKv = llama && opts.slots === undefined;
  const slots = new Slots(slotCount, count, { unified: unifiedKv });
  /** The requests in flight and their prompt tokens: on one KV cache they share the context. */
  const flights = new Set<{ tokens: number; failed: boolean }>();
  const fail = (
    res: ServerResponse,
    status: number,
    message: string,
    extra?: Record<string, unknown>,
  ) => sendJson(res, status, errorBody(kind, status, message, extra));

  /** No room in the shared KV cache: a 500, or for a stream (already answered 200) its error event. */
  const noRoom = (res: ServerResponse, stream: boolean, recorded: RecordedRequest) => {
    if (!stream) return fail(res, 500, CONTEXT_FULL);
    recorded.streamedError = CONTEXT_FULL;
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    res.end(`data: ${JSON.stringify(errorBody(kind, 500, CONTEXT_FULL))}\n\n`);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const { body } = await readBody(req);
    const url = new URL(req.url ?? "/", "http://x");
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      prefix: "",
      headers: req.headers,
      body,
      at: Date.now(),
    };
    requests.push(recorded);
    res.once("finish", () => (recorded.status = res.statusCode));
    const route = url.pathname;
    const isPublic = llama && route === "/health";
    if (opts.apiKey && !isPublic && req.headers.authorization !== `Bearer ${opts.apiKey}`)
      return fail(res, 401, "Invalid API Key");
    if (llama && req.method === "GET" && route === "/v1/models")
      return sendJson(res, 200, llamaModels(served, servedModel));
    if (llama) {
      const request = { method: req.method ?? "GET", route, body };
      const server = {
        name: served,
        model: servedModel,
        slots,
        slotCount,
        version: opts.version ?? "b1-fake",
      };
      if (llamaRoute(request, res, server)) return;
    }
    if (req.method === "GET" && route === "/v1/models") {
      return sendJson(res, 200, {
        object: "list",
        data: Object.entries(models).map(([name, m]) => ({
          id: name,
          object: "model",
          created: 1_763_900_000,
          owned_by:
            kind === "vllm" ? "vllm" : kind === "llama.cpp" ? "llamacpp" : "organization_owner",
          ...(kind === "vllm" ? { max_model_len: m.contextLength ?? 8192 } : {}),
          ...(kind === "llama.cpp" ? { meta: { n_ctx_train: 131072 } } : {}),
        })),
      });
    }
    if (req.method === "GET" && route.startsWith("/api/v0/models/") && kind === "lmstudio") {
      const name = decodeURIComponent(route.slice("/api/v0/models/".length));
      const m = models[name];
      return m
        ? sendJson(res, 200, lmStudioModel(name, m))
        : fail(res, 404, `Model "${name}" not found`);
    }
    if (req.method === "POST" && route === "/v1/chat/completions") {
      if (llama && typeof body === "string")
        return fail(res, 500, `[json.exception.parse_error.101] parse error: ${body.slice(0, 40)}`);
      return chat(body, res, recorded);
    }
    fail(res, 404, `File Not Found`);
  };

  const chat = async (body: unknown, res: ServerResponse, recorded: RecordedRequest) => {
    if (
      typeof body !== "object" ||
      body === null ||
      !Array.isArray((body as OpenAIChatBody).messages)
    )
      return fail(res, 400, "'messages' is required");
    const b = body as OpenAIChatBody;
    // llama-server serves one model and ignores the name a request gives; the others look it up.
    const model = llama ? servedModel : models[b.model];
    if (!model) return fail(res, 404, `The model \`${b.model}\` does not exist.`);
    const wrongType = llama ? wrongField(b) : undefined;
    if (wrongType) return fail(res, 400, wrongType);
    if (b.stream_options && rejectStreamOptions)
      return fail(res, 400, "Unrecognized request argument supplied: stream_options");
    const refused = opts.rejectArguments?.find((k) => k in b);
    if (refused)
      return fail(
        res,
        400,
        kind === "vllm"
          ? `[{'type': 'extra_forbidden', 'loc': ('body', '${refused}'), 'msg': 'Extra inputs are not permitted'}]`
          : `Unrecognized request argument supplied: ${refused}`,
      );
    if (b.tools?.length && opts.requireJinja)
      return fail(res, 500, "tools param requires --jinja flag");
    if (b.tools?.length && opts.noAutoToolChoice)
      return fail(
        res,
        400,
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
      );
    const chatBody = asChatBody(b);
    const context = model.contextLength ?? 8192;
    const prompt = applyTemplate(chatBody);
    const promptTokens = count(prompt);
    const refusal = overContext(kind, promptTokens, context);
    if (refusal) return fail(res, 400, refusal.message, refusal.extra);
    // Without -np, llama-server's slots share one KV cache of the context's size: when the
    // requests in flight together do not fit, its decode fails the batch — the newcomer, and
    // those in flight that have not begun to answer (measured).
    const flight = { tokens: promptTokens, failed: false };
    if (unifiedKv) {
      const inUse = [...flights].reduce((n, f) => n + f.tokens, 0);
      if (inUse + promptTokens > context) {
        for (const f of flights) f.failed = true;
        return noRoom(res, b.stream === true, recorded);
      }
      flights.add(flight);
      res.once("close", () => flights.delete(flight));
    }
    const reuse =
      llama && opts.shifts !== false && typeof b.n_cache_reuse === "number" ? b.n_cache_reuse : 0;
    const taken = slots.take(
      prompt,
      reuse,
      llama && typeof b.id_slot === "number" && b.id_slot >= 0 ? b.id_slot : undefined,
    );
    // --no-cache-prompt, or a request's cache_prompt: false: the whole prompt is evaluated (measured)
    const account =
      opts.noCachePrompt || b.cache_prompt === false ? { ...taken, cachedTokens: 0 } : taken;
    const view = viewOf(chatBody, "", { truncated: false, promptTokens });
    const reply = queue.length ? queue.shift()! : await script(view);
    if ("fault" in reply) {
      switch (reply.fault) {
        case "status":
          if (reply.delayMs) await sleep(reply.delayMs);
          return fail(res, reply.status, reply.error);
        case "reset-before":
          res.socket?.destroy();
          return;
        case "hang":
          hanging.add(res);
          return;
        default:
          return fail(res, 500, `fake-openai: fault ${reply.fault} is not imitated`);
      }
    }
    const unknown = (reply.toolCalls ?? []).find(
      (c) => !reply.allowUnknownTools && !view.toolNames.includes(c.name),
    );
    if (unknown) {
      const why = `script called tool "${unknown.name}" which the request did not offer (offered: ${view.toolNames.join(", ") || "none"})`;
      violations.push(why);
      return fail(res, 500, `fake-openai: ${why}`);
    }
    const whole = (reply.toolCalls ?? []).map((c) => ({
      id: llama ? llamaId() : id("call_"),
      type: "function",
      function: {
        name: c.name,
        arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
      },
    }));
    // A reply stops at max_tokens, and on llama-server at the end of the slot's context.
    const limit = b.max_completion_tokens ?? b.max_tokens;
    const room = llama ? context - promptTokens : Infinity;
    const budget = Math.min(limit !== undefined && limit >= 0 ? limit : Infinity, room);
    // Reasoning is generated first and counts toward the budget (completion_tokens include it).
    const thought = reply.thinking ?? "";
    const thoughtTokens = thought ? countTokens(thought) : 0;
    const thinking = thoughtTokens > budget ? cutToTokens(thought, budget) : thought;
    const after = cutReply(reply.content ?? "", whole, Math.max(0, budget - thoughtTokens));
    const { content, calls } = after;
    const tokens = Math.min(thoughtTokens, budget) + after.tokens;
    const cut = after.cut || thoughtTokens > budget;
    slots.generated(account.slot, generatedText(content, calls));
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: tokens,
      total_tokens: promptTokens + tokens,
      ...(llama ? { prompt_tokens_details: { cached_tokens: account.cachedTokens } } : {}),
    };
    const finish = cut ? "length" : (reply.doneReason ?? (calls.length ? "tool_calls" : "stop"));
    answers.push({ finish, usage });
    const promptN = promptTokens - account.cachedTokens;
    if (reply.delayMs) await sleep(reply.delayMs);
    if (flight.failed) return noRoom(res, b.stream === true, recorded);
    const completion: Completion = {
      ...(opts.completionId
        ? { id: opts.completionId }
        : llama
          ? { id: llamaId("chatcmpl-") }
          : {}),
      model: llama ? served : b.model,
      content,
      ...(thinking ? { thinking } : {}),
      ...(reply.thinkingPieces ? { thinkingPieces: reply.thinkingPieces } : {}),
      calls,
      finish,
      usage,
      ...(reply.pieces ? { pieces: reply.pieces } : {}),
      ...(reply.paceMs ? { paceMs: reply.paceMs } : {}),
      ...(llama
        ? {
            timings: timings(account.cachedTokens, promptN, tokens, MACHINES.gpu),
            contentWithCalls: "",
          }
        : {}),
    };
    if (b.stream) {
      const left = await writeStream(res, completion, b.stream_options?.include_usage === true);
      if (left !== undefined) recorded.clientLeftAfter = left;
      // llama-server closes its connection after every streamed reply, though it announced
      // keep-alive: a request a client sends on it before reading the close is never read
      const socket = res.socket;
      if (llama && socket) {
        if (res.writableFinished) socket.destroy();
        else res.once("finish", () => socket.destroy());
      }
      return;
    }
    writeCompletion(res, completion);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) fail(res, 500, `fake-openai: ${(err as Error).message}`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const root = `http://127.0.0.1:${port}`;
  const chatBodies = (o?: { turnsOnly?: boolean }) =>
    requests
      .filter((r) => r.method === "POST" && r.path === "/v1/chat/completions")
      .map((r) => r.body as OpenAIChatBody)
      .filter((b) => !o?.turnsOnly || b.response_format === undefined);
  return {
    url: root,
    baseUrl: `${root}/v1`,
    requests,
    chatBodies,
    answers,
    violations,
    setScript: (s) => {
      script = s;
    },
    inject: (...replies) => {
      queue.push(...replies);
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
