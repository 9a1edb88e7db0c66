import { ChatOllama } from "@langchain/ollama";
import type { ChatModelFactory } from "../types.js";
import { createOllamaFetch } from "./fetch.js";

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
