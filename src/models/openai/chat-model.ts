/**
 * An OpenAI-compatible server's chat model: `@langchain/openai`'s ChatOpenAI with keel's wire
 * around it (deadlines, the server's quirks) and keel's retries instead of the SDK's.
 */
import type * as OpenAIModule from "@langchain/openai";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { ChatModelFactory } from "../types.js";
import {
  createWireFetch,
  currentWireTurn,
  NOTHING_STREAMED,
  type StreamedText,
  type WireFacts,
  type WireTurn,
} from "../wire.js";
import { contextGate } from "../shared-context.js";
import { QUIRKS } from "./quirks.js";
import { argumentToDrop, withoutArguments } from "./rejected.js";

let openai: typeof OpenAIModule | undefined;

/**
 * Loads `@langchain/openai`, only for runs that use it (it adds ~0.3 s to every start of the CLI
 * otherwise).
 */
export async function loadOpenAIProvider(): Promise<void> {
  openai ??= await import("@langchain/openai");
}

/**
 * Asks LangChain to take a chat model's streaming path on every call, as it does when LangGraph's
 * `messages` mode listens: the reply is read as it arrives, so keel's loop watch (wire.ts) can stop
 * a reply that fell into a loop, also in runs nobody watches (`keel eval`, `graph.invoke`). Only on
 * servers that report usage in a stream: elsewhere a whole answer keeps the server's token counts.
 */
class PreferStreaming extends BaseCallbackHandler {
  name = "keel-prefer-streaming";
  lc_prefer_streaming = true;
}

/**
 * ChatOpenAI for the run's server. `streaming` stays off: with it on, `invoke` counts tokens with
 * tiktoken, which downloads its tables and hangs offline (docs/servers.md). Replies stream all the
 * same, through the chunk path: wherever someone listens (LangGraph's `messages` mode, the CLI), and
 * on every call to a server that takes `stream_options` (`PreferStreaming`). It never retries by itself
 * (keel's `withModelRetry` does, with the error classified) and sends the server's quirks on the wire.
 */
export const createOpenAIChatModel: ChatModelFactory = (s) => {
  if (!openai)
    throw new Error(
      "createOpenAIChatModel: await loadOpenAIProvider() first (keel's runs do, in modelFitOf)",
    );
  const quirks = QUIRKS[s.server ?? "generic"];
  const dropped = new Set(s.memory?.dropped ?? []);
  return new openai.ChatOpenAI({
    model: s.model,
    temperature: s.temperature,
    streamUsage: quirks.streamUsage,
    maxRetries: 0,
    ...(quirks.streamUsage ? { callbacks: [new PreferStreaming()] } : {}),
    apiKey: s.apiKey ?? "no-key",
    configuration: {
      baseURL: s.serverUrl ?? s.ollamaUrl,
      fetch: createWireFetch({
        timeoutMs: s.requestTimeoutMs,
        isChat: (pathname) => pathname.endsWith("/chat/completions"),
        request: (body) => {
          const turn = currentWireTurn();
          if (!quirks.streamUsage) delete body.stream_options;
          addReasoning(body.messages, turn);
          if (quirks.serialCalls && Array.isArray(body.tools) && body.tools.length > 0)
            body.parallel_tool_calls = false;
          if (turn?.maxTokens) body.max_tokens = turn.maxTokens;
          // No id_slot: on llama-server's default slots (one KV cache) a named slot has been
          // cleared by other conversations' requests and loads nothing back from the prompt cache
          // (docs/model-edge.md); left to the server, a request finds its prefix there.
          // The kept turns after a fold, found further on in the cache, are shifted into place.
          if (turn?.cacheReuse) {
            body.n_cache_reuse = turn.cacheReuse;
            body.cache_prompt = true;
          }
          return withoutArguments(body, dropped);
        },
        line: (line, facts) => {
          if (facts) noteServerFigures(line, facts);
          return line;
        },
        generated: streamedText,
        cutEnd: CUT_END,
        ...(quirks.sharedContext ? { gate: contextGate(s.serverUrl ?? "") } : {}),
        // A server that rejects one argument: leave it out, send again, remember it (issue 27).
        resend: async (status, text, body) => {
          const name = status === 400 || status === 422 ? argumentToDrop(text, body) : undefined;
          if (!name) return undefined;
          dropped.add(name);
          await s.memory?.onDrop?.(name);
          return withoutArguments(body, [name]);
        },
      }),
    },
  });
};

/** The end of a stream whose reply was cut at its budget, as a server sends it. */
const CUT_END = `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "length" }] })}\n\ndata: [DONE]\n\n`;

/** The reply text a streamed `data:` line adds: content, reasoning and call arguments. */
export function streamedText(line: string): StreamedText {
  if (!line.startsWith("data:") || !line.includes('"delta"')) return NOTHING_STREAMED;
  try {
    const obj = JSON.parse(line.slice(5)) as {
      choices?: Array<{
        delta?: {
          content?: string | null;
          reasoning_content?: string | null;
          tool_calls?: Array<{ function?: { arguments?: string } }>;
        };
      }>;
    };
    const d = obj.choices?.[0]?.delta;
    if (!d) return NOTHING_STREAMED;
    return {
      prose: `${d.reasoning_content ?? ""}${d.content ?? ""}`,
      args: (d.tool_calls ?? []).map((c) => c.function?.arguments ?? "").join(""),
      ...(d.reasoning_content ? { thinking: d.reasoning_content } : {}),
    };
  } catch {
    return NOTHING_STREAMED;
  }
}

/**
 * Reads what a server reports beside what the client library keeps: why it stopped
 * (`finish_reason`, dropped from streamed replies), llama.cpp's `timings` (`cache_n`, `prompt_n`)
 * and the standard `usage.prompt_tokens_details.cached_tokens`, from a streamed `data:` line or a
 * whole JSON answer. Mutates `facts`.
 */
export function noteServerFigures(line: string, facts: WireFacts): void {
  const finish = /"finish_reason"\s*:\s*"([a-z_]+)"/.exec(line);
  if (finish) facts.finishReason = finish[1];
  if (!line.includes('"timings"') && !line.includes('"cached_tokens"')) return;
  try {
    const obj = JSON.parse(line.replace(/^data:\s*/, "")) as {
      timings?: { cache_n?: number; prompt_n?: number };
      usage?: { prompt_tokens_details?: { cached_tokens?: number } | null };
    };
    const cached = obj.usage?.prompt_tokens_details?.cached_tokens ?? obj.timings?.cache_n;
    if (typeof cached === "number") facts.cachedTokens = cached;
    if (typeof obj.timings?.prompt_n === "number") facts.evaluatedTokens = obj.timings.prompt_n;
  } catch {
    // a line that is not JSON reports nothing
  }
}

/**
 * Gives each assistant tool-call message back the `reasoning_content` it was produced with
 * (ChatOpenAI drops it from history; llama.cpp keeps gpt-oss on track with it: PR 15181). Mutates.
 */
export function addReasoning(messages: unknown, turn: WireTurn | undefined): void {
  if (!turn || !Array.isArray(messages)) return;
  let k = 0;
  for (const m of messages as Array<{
    role?: string;
    tool_calls?: unknown[];
    reasoning_content?: string;
  }>) {
    if (m.role !== "assistant") continue;
    const t = turn.thinking[k++];
    if (t && m.tool_calls?.length && !m.reasoning_content) m.reasoning_content = t;
  }
}
