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
 * A real llama-server on `gguf` with 4 slots, each with `slotTokens` of context (`-c` is shared by
 * the slots: `-np 4 -c 4n` gives each n).
 */
export function llamaSide(binary: string, gguf: string, slots = 4): ServerSide {
  return {
    kind: "llama.cpp",
    start: async (slotTokens) => {
      const s = await startLlamaServer({ binary, gguf, slots, ctx: slots * slotTokens });
      const models = (await (await fetch(`${s.url}/v1/models`)).json()) as {
        data: Array<{ id: string }>;
      };
      return { url: s.url, model: models.data[0]!.id, log: () => s.log(), close: () => s.close() };
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
 * Ollama's own account of each request's cache reuse: its runner logs, at debug level, one
 * "loading cache slot" line per completion with the prompt's length (`prompt`, after any cut) and
 * how many of its first tokens the slot already held (`used`). `prompt_eval_count` is the whole
 * prompt, cached or not, so it cannot tell reuse by itself.
 */
export function ollamaReuse(log: string): Array<{ prompt: number; used: number }> {
  return [...log.matchAll(/loading cache slot[^\n]*?prompt=(\d+)[^\n]*?used=(\d+)/g)].map((m) => ({
    prompt: Number(m[1]),
    used: Number(m[2]),
  }));
}

/**
 * A real Ollama (its models folder as the installer imported them) serving `model`, debug logs on
 * for the cache reuse (see `ollamaReuse`). Each request asks for its own num_ctx (keel: its
 * window; the peers: the window too, as ChatOllama's numCtx), so the peers' prompts over the window
 * are cut by Ollama as they would be for a user.
 */
export function ollamaSide(binary: string, models: string, model: string): ServerSide {
  return {
    kind: "ollama",
    start: async () => {
      const s = await startOllama({ binary, models, env: { OLLAMA_DEBUG: "1" } });
      return { url: s.url, model, log: () => s.log(), close: () => s.close() };
    },
    derive: (records, log) => {
      const loads = ollamaReuse(log);
      records
        .filter((r) => r.status === 200)
        .forEach((r, i) => {
          const load = loads[i];
          if (!load) return;
          r.cachedTokens = load.used;
          r.promptTokens = load.prompt;
        });
    },
    peerModel: (url, name, window) =>
      new ChatOllama({ model: name, baseUrl: url, numCtx: window, temperature: 0.2 }),
    keelSettings: (url) => ({ provider: "ollama", ollamaUrl: url }),
  };
}
