/**
 * `keel-agent/testing`: the fake Ollama server (a real HTTP server that speaks Ollama's API and
 * replays scripted model behaviour, with a KV-cache and prefill model), the fake OpenAI-compatible
 * server (llama.cpp, LM Studio, vLLM, MLX profiles, same scripts), the script helpers, the fakes'
 * tokenizer, and starting the real llama-server and Ollama that `npm run real-servers` installs.
 */
export * from "./fake-ollama/index.js";
export * from "./fake-openai/index.js";
export * from "./script.js";
export * from "./eval-model.js";
export * from "./real-servers.js";
export { countTokens, cutToTokens, tailToTokens } from "./tokens.js";
