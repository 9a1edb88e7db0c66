/**
 * keel's public API: build the graphs, configure runs, run them from code.
 *
 * @example
 * ```ts
 * import { createCoderGraph, runConfig } from "keel-agent";
 * import { MemorySaver } from "@langchain/langgraph";
 * const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
 * const state = await graph.invoke(
 *   { messages: [{ role: "user", content: "Create hello.txt saying hi" }] },
 *   runConfig("thread-1", { workspace: "./tmp", model: "qwen3:8b" }),
 * );
 * ```
 *
 * The text tool-call parser is `keel-agent/tool-calls`; the fake Ollama server for tests is
 * `keel-agent/testing`.
 */
export { runAgent, runAnalysis, type RunAgentOptions, type RunAnalysisOptions } from "./api.js";
export { createCoderGraph } from "./coder/graph.js";
export { createIntentGraph } from "./coder/intent-graph.js";
export { createAnalystGraph } from "./analyst/graph.js";
export {
  AnalystContextSchema,
  analystRunConfig,
  type AnalystSettings,
  type AnalystSettingsInput,
} from "./analyst/context.js";
export { AnalystState, type AnalystStateValue } from "./analyst/state.js";
export type { AnalysisReport } from "./analyst/report.js";
export { enumerateUnits, type FileUnit, type Enumeration } from "./analyst/enumerate.js";
export { SqliteStore } from "./persistence/sqlite-store.js";
export { createStore } from "./persistence/store.js";
export { openPersistence, PersistenceError, type Persistence } from "./persistence/open.js";
export {
  ContextSchema,
  runConfig,
  settingsFrom,
  recursionLimitFor,
  type Settings,
  type SettingsInput,
} from "./coder/context.js";
export { CoderState, type CoderStateValue } from "./coder/state.js";
export { NODE } from "./coder/routing.js";
export type { KeelEvent } from "./coder/runtime.js";
export type { GraphDeps } from "./run/model.js";
export { ALL_TOOLS, toolsForIntent, lookupTool, validateArgs } from "./tools/registry.js";
export type { KeelTool, ToolResult, ToolContext, ToolClass } from "./tools/types.js";
export { createOllamaChatModel } from "./models/ollama/chat-model.js";
export { createOpenAIChatModel, loadOpenAIProvider } from "./models/openai/chat-model.js";
export {
  createChatModel,
  type ChatModelFactory,
  type ChatModelSettings,
} from "./models/chat-model.js";
export { createOllamaFetch, addToolIdentity } from "./models/ollama/fetch.js";
export { ModelServerError, classifyModelError } from "./models/errors.js";
export {
  createCheckpointer,
  parseCheckpointUrl,
  defaultCheckpoints,
} from "./persistence/checkpointer.js";
export { callSignature, normalisePath } from "./guard/signature.js";
export {
  chooseToolMode,
  formatFor,
  type ModelProfile,
  type ToolMode,
} from "./models/capabilities.js";
export { createCapabilityProbe } from "./models/probe.js";
export { runSession, type SessionOptions } from "./session/session.js";
export type { RunOutcome } from "./session/outcome.js";
export { closeMcp, withMcpScope } from "./mcp/session.js";
