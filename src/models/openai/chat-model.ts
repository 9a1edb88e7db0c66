/**
 * An OpenAI-compatible server's chat model: `@langchain/openai`'s ChatOpenAI with keel's wire
 * around it (deadlines, the server's quirks) and keel's retries instead of the SDK's.
 */
import type * as OpenAIModule from "@langchain/openai";
import type { ChatModelFactory } from "../chat-model.js";
import { createWireFetch, currentWireTurn, type WireTurn } from "../wire.js";
import { QUIRKS } from "./quirks.js";

let openai: typeof OpenAIModule | undefined;

/**
 * Loads `@langchain/openai`, only for runs that use it (it adds ~0.3 s to every start of the CLI
 * otherwise).
 */
export async function loadOpenAIProvider(): Promise<void> {
  openai ??= await import("@langchain/openai");
}

/**
 * ChatOpenAI for the run's server. `streaming` stays off: with it on, `invoke` counts tokens with
 * tiktoken, which downloads its tables and hangs offline (docs/servers.md). The reply still streams
 * wherever someone listens (LangGraph's `messages` mode, the CLI), through the chunk path, which asks
 * for usage in the stream only where the server takes `stream_options`. It never retries by itself
 * (keel's `withModelRetry` does, with the error classified) and sends the server's quirks on the wire.
 */
export const createOpenAIChatModel: ChatModelFactory = (s) => {
  if (!openai)
    throw new Error(
      "createOpenAIChatModel: await loadOpenAIProvider() first (keel's runs do, in modelFitOf)",
    );
  const quirks = QUIRKS[s.server ?? "generic"];
  return new openai.ChatOpenAI({
    model: s.model,
    temperature: s.temperature,
    streamUsage: quirks.streamUsage,
    maxRetries: 0,
    apiKey: s.apiKey ?? "no-key",
    configuration: {
      baseURL: s.serverUrl ?? s.ollamaUrl,
      fetch: createWireFetch({
        timeoutMs: s.requestTimeoutMs,
        isChat: (pathname) => pathname.endsWith("/chat/completions"),
        request: (body) => {
          if (!quirks.streamUsage) delete body.stream_options;
          addReasoning(body.messages, currentWireTurn());
          if (quirks.serialCalls && Array.isArray(body.tools) && body.tools.length > 0)
            body.parallel_tool_calls = false;
          return body;
        },
      }),
    },
  });
};

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
