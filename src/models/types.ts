/**
 * What every provider's model shares: the settings a chat-model factory takes and the factory's
 * type. Below `chat-model.ts` and the providers' folders, so they import it without importing
 * each other.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ThinkField } from "./capabilities.js";
import type { ServerKind } from "./openai/quirks.js";
import type { Provider } from "./provider.js";

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
