export { DEFAULT_FAKE_MODELS, startFakeOllama } from "./server.js";
export * from "./types.js";
export * from "./prefill.js";
