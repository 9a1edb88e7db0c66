/**
 * A fake Ollama server: a real HTTP server on 127.0.0.1 that speaks Ollama's native API as
 * docs/ollama-protocol.md §9 describes, and replays scripted model behaviour. Scripts are reactive: they
 * decide each reply from the request (the conversation so far), so a test can express a model that
 * makes a mistake and recovers only when it is told. Every request is recorded for assertions.
 * It powers the test suite and `keel demo`; whatever it answers is scripted, never a real model.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { sendPs, sendRunning, sendShow, sendTags, sendVersion } from "./api.js";
import { chat } from "./chat.js";
import { sendError } from "./replies.js";
import {
  lookupModel,
  prefillFor,
  recordedFinish,
  stateOf,
  withTag,
  type FakeOllamaState,
} from "./state.js";
import type { ChatBody, ChatView, FakeOllama, FakeOllamaOptions } from "./types.js";
import { readBody } from "../http.js";
import { compatRoute, type CompatServer } from "./openai-compat.js";

export { DEFAULT_FAKE_MODELS } from "./state.js";

/** Starts a fake Ollama server on 127.0.0.1 with an OS-assigned port. */
export async function startFakeOllama(opts: FakeOllamaOptions = {}): Promise<FakeOllama> {
  const fake = stateOf(opts);
  const server: Server = createServer((req, res) => {
    handle(fake, req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, `fake-ollama: ${(err as Error).message}`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const { requests } = fake;
  const chatRequests = () =>
    requests.filter((r) => r.method === "POST" && r.path.endsWith("/api/chat"));
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    violations: fake.violations,
    prefill: fake.prefill,
    chatRequests,
    chatBodies: (o) =>
      chatRequests()
        .map((r) => r.body as ChatBody)
        .filter((b) => !o?.turnsOnly || b.format === undefined),
    setScript: (s) => {
      fake.script = s;
    },
    inject: (...replies) => {
      fake.queue.push(...replies);
    },
    onChat: (hook) => {
      fake.chatHook = hook;
    },
    close: async () => {
      for (const res of fake.hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Records a request and routes it: the native API, then the `/v1` endpoint, else Go's 404. */
async function handle(fake: FakeOllamaState, req: IncomingMessage, res: ServerResponse) {
  const { raw, body } = await readBody(req);
  const url = new URL(req.url ?? "/", "http://x");
  const apiAt = url.pathname.indexOf("/api/");
  const prefix = apiAt > 0 ? url.pathname.slice(0, apiAt) : "";
  const route = apiAt >= 0 ? url.pathname.slice(apiAt) : url.pathname;
  fake.requests.push({
    method: req.method ?? "GET",
    path: url.pathname,
    prefix,
    headers: req.headers,
    body,
    at: Date.now(),
  });

  if ((req.method === "GET" || req.method === "HEAD") && (route === "/" || route === ""))
    return sendRunning(res, req.method === "HEAD");
  if (req.method === "GET" && route === "/api/version") return sendVersion(res, fake);
  if (req.method === "GET" && route === "/api/tags") return sendTags(res, fake.models);
  if (req.method === "POST" && route === "/api/show") return sendShow(res, fake.models, body);
  if (req.method === "POST" && route === "/api/chat") return chat(fake, raw, body, prefix, res);
  if (req.method === "GET" && route === "/api/ps") return sendPs(res, fake);
  if (await compatRoute(req.method ?? "GET", route, body, res, compatServer(fake))) return;
  res.writeHead(404, { "Content-Type": "text/plain" });
  res.end("404 page not found");
}

/** What the `/v1` endpoint gets of the fake: the same models, KV cache, replies and residency. */
function compatServer(fake: FakeOllamaState): CompatServer {
  return {
    lookup: (name: string) => lookupModel(fake.models, name),
    prefill: (model: string, body: ChatBody, contextLength: number) => {
      const account = prefillFor(fake, model, body, contextLength);
      return account && { ...account, finish: recordedFinish(fake, account) };
    },
    reply: async (view: ChatView) =>
      fake.queue.length ? fake.queue.shift()! : await fake.script(view),
    served: (model: string, keepAlive: unknown) => fake.residency.served(withTag(model), keepAlive),
    models: () => Object.keys(fake.models).map(withTag),
  };
}
