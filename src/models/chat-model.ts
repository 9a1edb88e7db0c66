import { ChatOllama } from "@langchain/ollama";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ThinkField } from "./capabilities.js";
import { createOllamaFetch } from "./ollama-fetch.js";

export interface ChatModelSettings {
  model: string;
  ollamaUrl: string;
  temperature: number;
  numCtx?: number;
  requestTimeoutMs: number;
  /** The `think` field of model turns (see `thinkFor`); structured requests always send false. */
  thinking?: ThinkField;
}

/** Builds a model from run settings; graphs take one of these so tests and users can swap it. */
export type ChatModelFactory = (s: ChatModelSettings) => BaseChatModel;

/** ChatOllama with keel's repairing fetch (tool identities, string arguments, deadlines). */
export const createOllamaChatModel: ChatModelFactory = (s) =>
  new ChatOllama({
    model: s.model,
    baseUrl: s.ollamaUrl,
    temperature: s.temperature,
    ...(s.numCtx ? { numCtx: s.numCtx } : {}),
    fetch: createOllamaFetch({
      timeoutMs: s.requestTimeoutMs,
      ...(s.thinking !== undefined ? { think: s.thinking } : {}),
    }),
  });
