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
import type { RecordedRequest } from "../fake-ollama/types.js";
import { readBody } from "../http.js";
import { countTokens } from "../tokens.js";
import { chat } from "./chat.js";
import { llamaModels, llamaRoute } from "./llamacpp.js";
import { lmStudioModel, sendError, sendJson } from "./replies.js";
import { Slots } from "./slots.js";

export type { FakeOpenAI, FakeOpenAIModel, FakeOpenAIOptions, OpenAIChatBody } from "./types.js";
import type {
  FakeOpenAI,
  FakeOpenAIModel,
  FakeOpenAIOptions,
  FakeOpenAIState,
  OpenAIChatBody,
} from "./types.js";

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

/** Starts the fake on 127.0.0.1 with an OS-assigned port. */
export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const fake = stateOf(opts);
  const server: Server = createServer((req, res) => {
    handle(fake, req, res).catch((err: unknown) => {
      if (!res.headersSent)
        sendError(res, fake.kind, 500, `fake-openai: ${(err as Error).message}`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const root = `http://127.0.0.1:${port}`;
  const { requests } = fake;
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
    answers: fake.answers,
    violations: fake.violations,
    setScript: (s) => {
      fake.script = s;
    },
    inject: (...replies) => {
      fake.queue.push(...replies);
    },
    close: async () => {
      for (const res of fake.hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A fresh fake's state: the options resolved for the server imitated (its models, slots, quirks). */
function stateOf(opts: FakeOpenAIOptions): FakeOpenAIState {
  const kind = opts.server ?? "llama.cpp";
  const models = opts.models ?? (kind === "mlx" ? DEFAULT_MLX_MODELS : DEFAULT_OPENAI_MODELS);
  const llama = kind === "llama.cpp";
  const slotCount = llama ? (opts.slots ?? 4) : 1;
  const [served, servedModel] = Object.entries(models)[0]!;
  const cpt = servedModel.charsPerToken;
  const count = cpt ? (text: string) => Math.ceil(text.length / cpt) : countTokens;
  // Without -np, llama-server shares one KV cache among its slots (`kv_unified`).
  const unifiedKv = llama && opts.slots === undefined;
  return {
    kind,
    opts,
    models,
    llama,
    served,
    servedModel,
    rejectStreamOptions: opts.rejectStreamOptions ?? (kind === "generic" || kind === "mlx"),
    count,
    slotCount,
    unifiedKv,
    slots: new Slots(slotCount, count, { unified: unifiedKv }),
    flights: new Set(),
    script: opts.script ?? (() => ({ content: "Hello from the scripted fake model." })),
    queue: [],
    requests: [],
    violations: [],
    answers: [],
    hanging: new Set<ServerResponse>(),
  };
}

/** Records a request and routes it: the API key, the server's own routes, models, then chat. */
async function handle(fake: FakeOpenAIState, req: IncomingMessage, res: ServerResponse) {
  const { kind, llama, opts } = fake;
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
  fake.requests.push(recorded);
  res.once("finish", () => (recorded.status = res.statusCode));
  const route = url.pathname;
  const isPublic = llama && route === "/health";
  if (opts.apiKey && !isPublic && req.headers.authorization !== `Bearer ${opts.apiKey}`)
    return sendError(res, kind, 401, "Invalid API Key");
  if (llama && req.method === "GET" && route === "/v1/models")
    return sendJson(res, 200, llamaModels(fake.served, fake.servedModel));
  if (llama) {
    const request = { method: req.method ?? "GET", route, body };
    const server = {
      name: fake.served,
      model: fake.servedModel,
      slots: fake.slots,
      slotCount: fake.slotCount,
      version: opts.version ?? "b1-fake",
    };
    if (llamaRoute(request, res, server)) return;
  }
  if (req.method === "GET" && route === "/v1/models") return sendJson(res, 200, modelList(fake));
  if (req.method === "GET" && route.startsWith("/api/v0/models/") && kind === "lmstudio") {
    const name = decodeURIComponent(route.slice("/api/v0/models/".length));
    const m = fake.models[name];
    return m
      ? sendJson(res, 200, lmStudioModel(name, m))
      : sendError(res, kind, 404, `Model "${name}" not found`);
  }
  if (req.method === "POST" && route === "/v1/chat/completions") {
    if (llama && typeof body === "string")
      return sendError(
        res,
        kind,
        500,
        `[json.exception.parse_error.101] parse error: ${body.slice(0, 40)}`,
      );
    return chat(fake, body, res, recorded);
  }
  sendError(res, kind, 404, `File Not Found`);
}

/** `/v1/models` as the servers other than llama-server list their models (its own: `llamaModels`). */
function modelList({ kind, models }: FakeOpenAIState): unknown {
  return {
    object: "list",
    data: Object.entries(models).map(([name, m]) => ({
      id: name,
      object: "model",
      created: 1_763_900_000,
      owned_by: kind === "vllm" ? "vllm" : kind === "llama.cpp" ? "llamacpp" : "organization_owner",
      ...(kind === "vllm" ? { max_model_len: m.contextLength ?? 8192 } : {}),
      ...(kind === "llama.cpp" ? { meta: { n_ctx_train: 131072 } } : {}),
    })),
  };
}
