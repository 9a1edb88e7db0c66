/**
 * What every node derives from its config: the run settings, the model, the retry policy and the
 * workspace root. Nodes stay thin by asking for this once.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { createOllamaChatModel, type ChatModelFactory } from "../models/chat-model.js";
import type { CapabilityProbe } from "../models/capabilities.js";
import type { RetryPolicy } from "../models/retry.js";
import { realWorkspace } from "../tools/sandbox.js";
import { settingsFrom, type Settings } from "./context.js";

/** Dependencies a graph is built with. Defaults talk to Ollama; tests and library users swap them. */
export interface GraphDeps {
  /** Builds the chat model for a run (default: ChatOllama with keel's repairing fetch). */
  createModel?: ChatModelFactory;
  /** Reads a model's capabilities (tool mode, text format). Default: Ollama's /api/show, cached; none for a custom model. */
  probe?: CapabilityProbe;
}

/** A timeline event a node reports through LangGraph's `custom` stream. */
export type KeelEvent =
  | { type: "retry"; attempt: number; delayMs: number; error: string }
  | { type: "approval"; command: string; approved: boolean }
  | {
      type: "compacted";
      folded: number;
      tokensBefore: number;
      tokensAfter: number;
      budget: number;
    };

export interface NodeEnv {
  settings: Settings & { ollamaUrl: string };
  model: () => BaseChatModel;
  policy: RetryPolicy;
  workspace: string;
  emit: (e: KeelEvent) => void;
}

export function nodeEnv(config: LangGraphRunnableConfig, deps: GraphDeps): NodeEnv {
  const settings = settingsFrom(config);
  const emit = (e: KeelEvent) => {
    try {
      config.writer?.(e);
    } catch {
      // No custom stream attached.
    }
  };
  let model: BaseChatModel | undefined;
  return {
    settings,
    // One num_ctx for every call of a run: Ollama reloads the model when it changes.
    model: () =>
      (model ??= (deps.createModel ?? createOllamaChatModel)({
        ...settings,
        numCtx: settings.contextWindow,
      })),
    workspace: realWorkspace(settings.workspace),
    emit,
    policy: {
      retries: settings.retries,
      baseMs: settings.retryBaseMs,
      url: settings.ollamaUrl,
      model: settings.model,
      signal: config.signal,
      onRetry: ({ attempt, delayMs, error }) =>
        emit({ type: "retry", attempt, delayMs, error: `${error.kind}: ${error.message}` }),
    },
  };
}
