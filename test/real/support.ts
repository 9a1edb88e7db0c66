/**
 * The real half of the suite: which real servers this machine has (the installer's
 * `KEEL_LLAMA_SERVER`, `KEEL_OLLAMA`, `KEEL_GGUF_<NAME>`), each started with a real small model
 * behind a recorder — a loopback proxy that passes every request through unchanged (streams as
 * they come) and keeps what the server received and answered, so tests assert the protocol.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readEnv } from "../../src/env.js";
import { readBody } from "../../src/testing/http.js";
import {
  locateRealServers,
  startLlamaServer,
  startOllama,
} from "../../src/testing/real-servers.js";

export const REAL = locateRealServers(readEnv().realServers);
/** The small real model the end-to-end tests drive (the installer's name, also Ollama's). */
export const SMOL_NAME = "smollm2-135m";
const SMOL = REAL.ggufs[SMOL_NAME];

export interface Exchange {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
  status: number;
  /** The answer as sent (SSE or NDJSON lines for a stream). */
  answer: string;
}

export interface RealServer {
  kind: "llama.cpp" | "ollama";
  /** keel's flags that reach the server through the recorder (provider, URL, model). */
  flags: string[];
  exchanges: Exchange[];
  /** The chat requests the server received. */
  chats(): Exchange[];
  close(): Promise<void>;
}

/**
 * A pass-through recorder in front of `upstream`. `cap` bounds Ollama's `num_predict` of a chat
 * request (what llama-server's own `-n` does there: keel's act budget is thousands of tokens, which a
 * 135M model on a CPU fills for minutes); the body is recorded as keel sent it.
 */
export async function recorder(upstream: string, cap?: number) {
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const { raw, body } = await readBody(req);
      const b = body as { options?: Record<string, unknown> } | undefined;
      const capped =
        cap &&
        req.url === "/api/chat" &&
        b &&
        !(typeof b.options?.num_predict === "number" && b.options.num_predict <= cap)
          ? JSON.stringify({ ...b, options: { ...b.options, num_predict: cap } })
          : raw;
      const r = await fetch(`${upstream}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers: { "Content-Type": "application/json" },
        ...(req.method === "GET" ? {} : { body: capped }),
      });
      res.writeHead(r.status, { "Content-Type": r.headers.get("content-type") ?? "text/plain" });
      let answer = "";
      const reader = r.body?.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const chunk = await reader?.read();
        if (!chunk || chunk.done) break;
        const bytes = chunk.value as Uint8Array;
        answer += decoder.decode(bytes, { stream: true });
        res.write(bytes);
      }
      res.end();
      exchanges.push({
        method: req.method ?? "GET",
        path: new URL(req.url ?? "/", "http://x").pathname,
        body: body as Record<string, unknown> | undefined,
        status: r.status,
        answer,
      });
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    exchanges,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface StartOptions {
  /** Context per request (llama-server: per slot; Ollama: num_ctx). */
  context: number;
  /** A cap on every reply the server generates (its own setting, not keel's). */
  maxReply?: number;
  /** The installer's name of the model to serve (default SmolLM2-135M, `SMOL_NAME`). */
  model?: string;
}

const chatPaths = new Set(["/v1/chat/completions", "/api/chat"]);

/** The real servers this machine has, each as a starter (none when the installer has not run). */
export function realServers(): Array<{
  kind: RealServer["kind"];
  start(o: StartOptions): Promise<RealServer>;
}> {
  if (!SMOL) return [];
  const out: ReturnType<typeof realServers> = [];
  const wrap = async (
    kind: RealServer["kind"],
    upstream: string,
    flags: (url: string) => string[],
    stop: () => Promise<void>,
    cap?: number,
  ): Promise<RealServer> => {
    const rec = await recorder(upstream, cap);
    return {
      kind,
      flags: flags(rec.url),
      exchanges: rec.exchanges,
      chats: () => rec.exchanges.filter((e) => e.method === "POST" && chatPaths.has(e.path)),
      close: async () => {
        await rec.close();
        await stop();
      },
    };
  };
  const llama = REAL.llamaServer;
  if (llama)
    out.push({
      kind: "llama.cpp",
      start: async (o) => {
        const gguf = REAL.ggufs[o.model ?? SMOL_NAME];
        if (!gguf) throw new Error(`no GGUF named ${o.model} (npm run real-servers lists them)`);
        const s = await startLlamaServer({
          binary: llama,
          gguf,
          ctx: o.context,
          slots: 1,
          args: o.maxReply ? ["-n", String(o.maxReply)] : [],
        });
        const models = (await (await fetch(`${s.url}/v1/models`)).json()) as {
          data: Array<{ id: string }>;
        };
        return wrap(
          "llama.cpp",
          s.url,
          (url) => [
            "--provider",
            "openai",
            "--base-url",
            `${url}/v1`,
            "--model",
            models.data[0]!.id,
          ],
          () => s.kill(), // at once: a request the test left behind may still be generating
        );
      },
    });
  const ollama = REAL.ollama;
  const models = REAL.ollamaModels;
  if (ollama && models)
    out.push({
      kind: "ollama",
      start: async (o) => {
        const s = await startOllama({ binary: ollama, models });
        return wrap(
          "ollama",
          s.url,
          (url) => ["--ollama-url", url, "--model", o.model ?? SMOL_NAME],
          () => s.kill(), // at once: a request the test left behind may still be generating
          o.maxReply,
        );
      },
    });
  return out;
}
