/** The kinds of model server keel speaks to: Ollama's native API, or an OpenAI-compatible `/v1`. */
export const PROVIDERS = ["ollama", "openai"] as const;
export type Provider = (typeof PROVIDERS)[number];
