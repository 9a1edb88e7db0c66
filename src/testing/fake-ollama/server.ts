/**
 * A fake Ollama server: a real HTTP server on 127.0.0.1 that speaks Ollama's native API as
 * docs/ollama-protocol.md §9 describes, and replays scripted model behaviour. Scripts are reactive: they
 * decide each reply from the request (the conversation so far), so a test can express a model that
 * makes a mistake and recovers only when it is told. Every request is recorded for assertions.
 * It powers the test suite and `keel demo`; whatever it answers is scripted, never a real model.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KvCache, MACHINES, type PrefillRecord } from "./prefill.js";
import { sendError, sendJson, writeReply } from "./replies.js";
import {
  viewOf,
  type ChatBody,
  type ChatView,
  type FakeModel,
  type FakeOllama,
  type FakeOllamaOptions,
  type RecordedRequest,
  type Reply,
  type Script,
} from "./types.js";
import { readBody } from "../http.js";
import { compatRoute } from "./openai-compat.js";
import { Residency } from "./residency.js";

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

/** Starts a fake Ollama server on 127.0.0.1 with an OS-assigned port. */
export async function startFakeOllama(opts: FakeOllamaOptions = {}): Promise<FakeOllama> {
  const models = opts.models ?? DEFAULT_FAKE_MODELS;
  let script: Script = opts.script ?? (() => ({ content: "Hello from the scripted fake model." }));
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];
  const hanging = new Set<ServerResponse>();
  let chatHook: ((req: ChatView, index: number) => void) | undefined;
  let chatCount = 0;
  const machine = opts.machine ?? MACHINES.gpu;
  const prefill: PrefillRecord[] = [];
  const cache = new KvCache(
    machine,
    (name) => {
      const m = lookupModel(models, name);
      return m?.charsPerToken ?? m?.density;
    },
    opts.defaultContext,
  );
  const residency = new Residency(opts.keepAliveMs ?? 300_000);
  const DIGEST = "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72";
  const prefillFor = (model: string, body: ChatBody, contextLength: number) => {
    residency.loaded(withTag(model), () => cache.unload());
    return cache.prefill(model, body, contextLength);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const { raw, body } = await readBody(req);
    const url = new URL(req.url ?? "/", "http://x");
    const apiAt = url.pathname.indexOf("/api/");
    const prefix = apiAt > 0 ? url.pathname.slice(0, apiAt) : "";
    const route = apiAt >= 0 ? url.pathname.slice(apiAt) : url.pathname;
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
      return sendJson(res, 200, { version: opts.version ?? "0.12.10" });
    if (req.method === "GET" && route === "/api/tags") {
      return sendJson(res, 200, {
        models: Object.entries(models).map(([name, m]) => ({
          name: withTag(name),
          model: withTag(name),
          modified_at: "2026-11-01T10:00:00.000000Z",
          size: 4_920_753_328,
          digest: m.digest ?? DIGEST,
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
        template:
          m.template ??
          (m.capabilities.includes("tools")
            ? "{{- if .Tools }}<tools>{{ .Tools }}</tools>{{ end }}{{ .Prompt }}"
            : "{{ .Prompt }}"),
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
    if (req.method === "GET" && route === "/api/ps") {
      const up = residency.running();
      const m = up && lookupModel(models, up.model);
      return sendJson(res, 200, {
        models:
          up && m
            ? [
                {
                  name: up.model,
                  model: up.model,
                  size: 4_920_753_328,
                  digest: m.digest ?? DIGEST,
                  expires_at: up.expiresAt.toISOString(),
                  size_vram: 0,
                },
              ]
            : [],
      });
    }
    const compat = {
      lookup: (name: string) => lookupModel(models, name),
      prefill: (model: string, body: ChatBody, contextLength: number) => {
        const account = prefillFor(model, body, contextLength);
        return (
          account && {
            ...account,
            finish: (r: { content: string }, generated?: number) => {
              const record = account.finish(r, generated);
              prefill.push(record);
              return record;
            },
          }
        );
      },
      reply: async (view: ChatView) => (queue.length ? queue.shift()! : await script(view)),
      served: (model: string, keepAlive: unknown) => residency.served(withTag(model), keepAlive),
      models: () => Object.keys(models).map(withTag),
    };
    if (await compatRoute(req.method ?? "GET", route, body, res, compat)) return;
    res.writeHead(404, { "Content-Type": "text/plain" });
    res.end("404 page not found");
  };

  const chat = async (raw: string, body: unknown, prefix: string, res: ServerResponse) => {
    if (!raw) return sendError(res, 400, "missing request body");
    if (typeof body !== "object" || body === null) {
      return sendError(res, 400, goJsonError(raw));
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
    const account = prefillFor(b.model, b, model.contextLength ?? 8192);
    // Ollama's runner, asked not to truncate: 400 with its own words (measured on 0.24).
    if (!account) return sendError(res, 400, "the input length exceeds the context length");
    const view = viewOf(b, prefix, account);
    chatHook?.(view, chatCount++);
    const scripted = queue.length ? queue.shift()! : await script(view);
    const stream = b.stream !== false;
    const thinks = model.capabilities.includes("thinking") && b.think !== false;
    // A thinking model asked for `format` with tools answers nothing (docs/servers.md: ollama issue
    // 10976); thinking is on when `think` is absent.
    const reply =
      thinks && view.structured && b.tools?.length && !("fault" in scripted)
        ? { content: "", allowInvalidJson: true }
        : scripted;
    await writeReply(reply, {
      res,
      view,
      stream,
      thinks,
      violations,
      hanging,
      machine,
      account: (r, generated) => {
        const record = account.finish(r, generated);
        prefill.push(record);
        return record;
      },
    });
    residency.served(withTag(b.model), b.keep_alive);
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
    prefill,
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
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Go's encoding/json message for a body that is not JSON (its first offending character). */
function goJsonError(raw: string): string {
  const text = raw.trim();
  if (text[0] === "{") {
    const next = text.slice(1).trim()[0];
    if (next !== undefined && next !== '"' && next !== "}")
      return `invalid character '${next}' looking for beginning of object key string`;
  }
  return `invalid character '${text[0] ?? ""}' looking for beginning of value`;
}
