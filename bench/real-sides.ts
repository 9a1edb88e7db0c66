/**
 * The two real servers as the real bench drives them (real-prefill.ts's `ServerSide`): how a fresh
 * server is started for one agent's run, how the peers' chat model and keel's settings reach it,
 * and what each server can say about the newest turn's tokens and its cache.
 */
import { ChatOllama } from "@langchain/ollama";
import { ChatOpenAI } from "@langchain/openai";
import type { FrontRecord } from "./real-front.js";
import type { ServerSide } from "./real-prefill.js";
import { startLlamaServer, startOllama } from "../src/testing/real-servers.js";

const post = async <T>(url: string, body: unknown): Promise<T> => {
  const r = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
};

/** Tokens of a chat request as llama-server renders it (its template, its tokenizer). */
export async function renderedTokens(url: string, body: Record<string, unknown>): Promise<number> {
  const { prompt } = await post<{ prompt: string }>(`${url}/apply-template`, body);
  const { tokens } = await post<{ tokens: unknown[] }>(`${url}/tokenize`, {
    content: prompt,
    add_special: true,
  });
  return tokens.length;
}

/**
 * The tokens of each request's newest turn (its last assistant message and the results after it;
 * the whole prompt when there is none), from the server's own rendering.
 */
async function newestTurns(url: string, records: FrontRecord[]): Promise<number[]> {
  const out: number[] = [];
  for (const r of records) {
    if (r.status !== 200) continue;
    const messages = (r.body.messages ?? []) as Array<{ role: string }>;
    const last = messages.map((m) => m.role).lastIndexOf("assistant");
    if (last < 0) {
      out.push(r.promptTokens);
      continue;
    }
    const base = await renderedTokens(url, { ...r.body, messages: messages.slice(0, last) });
    out.push(Math.max(0, r.promptTokens - base));
  }
  return out;
}

/**
 * A real llama-server on `gguf` with its default 4 slots, each with `slotTokens` of context
 * (`-c` is shared by the slots: `-np 4 -c 4n` gives each n).
 */
export function llamaSide(gguf: string, slots = 4): ServerSide {
  return {
    kind: "llama.cpp",
    start: async (slotTokens) => {
      const s = await startLlamaServer(gguf, [
        "-np",
        String(slots),
        "-c",
        String(slots * slotTokens),
      ]);
      const models = (await (await fetch(`${s.url}/v1/models`)).json()) as {
        data: Array<{ id: string }>;
      };
      return { url: s.url, model: models.data[0]!.id, close: () => s.close() };
    },
    peerModel: (url, model) =>
      new ChatOpenAI({
        model,
        apiKey: "none",
        temperature: 0.2,
        maxRetries: 0,
        configuration: { baseURL: url },
      }),
    keelSettings: (url) => ({ provider: "openai", baseUrl: url }),
    newestTurnTokens: newestTurns,
  };
}

/**
 * A real Ollama serving `gguf` imported as a model; the cache reuse of each request is read from
 * the runner's debug log (see `ollamaReuse`).
 */
export function ollamaSide(gguf: string): ServerSide & { logs: string[] } {
  const logs: string[] = [];
  const model = "keel-bench";
  return {
    kind: "ollama",
    logs,
    start: async (slotTokens) => {
      const s = await startOllama();
      await s.create(model, gguf, `PARAMETER num_ctx ${slotTokens}\n`);
      return {
        url: s.url,
        model,
        close: async () => {
          logs.push(s.log());
          await s.close();
        },
      };
    },
    peerModel: (url, name, window) =>
      new ChatOllama({ model: name, baseUrl: url, numCtx: window, temperature: 0.2 }),
    keelSettings: (url) => ({ provider: "ollama", ollamaUrl: url }),
  };
}
