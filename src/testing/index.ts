/**
 * `keel-agent/testing`: the fake Ollama server (a real HTTP server that speaks Ollama's API and
 * replays scripted model behaviour, with a KV-cache and prefill model) and the script helpers.
 */
export * from "./fake-ollama/index.js";
export * from "./script.js";
