export { DEFAULT_FAKE_MODELS, startFakeOllama } from "./server.js";
export * from "./types.js";
