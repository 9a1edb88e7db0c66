/**
 * The chat model of a run, whatever the server: the settings a factory takes, and the default
 * factory, which builds Ollama's (ollama/) or an OpenAI-compatible server's (openai/) model.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { Provider } from "../run/settings.js";
import type { ThinkField } from "./capabilities.js";
import { createOllamaChatModel } from "./ollama/chat-model.js";
import { createOpenAIChatModel, loadOpenAIProvider } from "./openai/chat-model.js";
import type { ServerKind } from "./openai/quirks.js";

export interface ChatModelSettings {
  /** Default ollama. */
  provider?: Provider;
  model: string;
  ollamaUrl: string;
  /** The server's URL (Ollama's, or the OpenAI-compatible `/v1` root); default `ollamaUrl`. */
  serverUrl?: string;
  apiKey?: string;
  /** provider openai: which server it is (its quirks), from discovery. */
  server?: ServerKind;
  temperature: number;
  numCtx?: number;
  requestTimeoutMs: number;
  /** The `think` field of model turns (see `thinkFor`); structured requests always send false. */
  thinking?: ThinkField;
  /** provider openai: what keel remembers of this server across runs (run/server-memory.ts). */
  memory?: ServerMemory;
  /** llama.cpp: its slots, where it has several (a thread is kept on one: `id_slot`). */
  slots?: number;
}

/** What keel remembers of a server across runs, kept in the store by its URL. */
export interface ServerMemory {
  /** Request arguments the server rejected: left out of every request to it. */
  dropped: readonly string[];
  /** Called, and awaited before the request is sent again, when the server rejects another one. */
  onDrop?: (argument: string) => Promise<void>;
}

/** Builds a model from run settings; graphs take one of these so tests and users can swap it. */
export type ChatModelFactory = (s: ChatModelSettings) => BaseChatModel;

/** The provider's model with keel's wire fixes. */
export const createChatModel: ChatModelFactory = (s) =>
  s.provider === "openai" ? createOpenAIChatModel(s) : createOllamaChatModel(s);

/** Loads what a provider's model needs (once); call before building its model. */
export async function loadProvider(provider: Provider | undefined): Promise<void> {
  if (provider === "openai") await loadOpenAIProvider();
}

/**
 * The call options that ask a provider's model for JSON of a schema: Ollama's `format`, or the
 * OpenAI `response_format` with a JSON schema.
 */
export function structuredOptions(
  provider: Provider | undefined,
  schema: Record<string, unknown>,
): Record<string, unknown> {
  return provider === "openai"
    ? {
        response_format: {
          type: "json_schema",
          json_schema: { name: "answer", schema, strict: false },
        },
      }
    : { format: schema };
}
