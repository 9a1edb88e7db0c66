/**
 * `keel-agent/testing`: the fake Ollama server (a real HTTP server that speaks Ollama's API and
 * replays scripted model behaviour, with a KV-cache and prefill model), the fake OpenAI-compatible
 * server (llama.cpp, LM Studio, vLLM, MLX profiles, same scripts) and the script helpers.
 */
export * from "./fake-ollama/index.js";
export * from "./fake-openai/index.js";
export * from "./script.js";
export * from "./eval-model.js";
