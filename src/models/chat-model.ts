/**
 * The chat model of a run, whatever the server: the settings a factory takes, and the default
 * factory, which builds Ollama's (ollama/) or an OpenAI-compatible server's (openai/) model.
 */
import { createOllamaChatModel } from "./ollama/chat-model.js";
import { createOpenAIChatModel, loadOpenAIProvider } from "./openai/chat-model.js";
import type { Provider } from "./provider.js";
import type { ChatModelFactory } from "./types.js";

export type { ChatModelFactory, ChatModelSettings, ServerMemory } from "./types.js";

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
