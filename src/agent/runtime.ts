/**
 * What every node derives from its config: the run settings, the model, the retry policy and the
 * workspace root. Nodes stay thin by asking for this once.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import {
  createCapabilityProbe,
  thinkFor,
  windowFor,
  type CapabilityProbe,
  type ModelProfile,
  type ThinkSetting,
} from "../models/capabilities.js";
import {
  createOllamaChatModel,
  type ChatModelFactory,
  type ChatModelSettings,
} from "../models/chat-model.js";
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
    }
  /** The server cut the prompt (its count `reported` under `numCtx`); keel refits and asks again. */
  | { type: "truncated"; reported: number; numCtx: number; estimated: number }
  /** The server's tool channel failed for this turn; it is asked again with tools in the prompt. */
  | { type: "tool-channel"; reason: string; pinned: boolean };

/** What the model of a run is built with once the model's profile is known. */
export interface ModelFit {
  /** num_ctx: the run's window for this model (see `windowFor`). */
  numCtx?: number;
  think?: ChatModelSettings["thinking"];
}

export interface NodeEnv {
  settings: Settings & { ollamaUrl: string };
  model: (fit?: ModelFit) => BaseChatModel;
  policy: RetryPolicy;
  workspace: string;
  emit: (e: KeelEvent) => void;
}

/**
 * The deps a graph runs with: Ollama's capability probe (one cache per built graph) unless the
 * caller brought its own model, which Ollama knows nothing about.
 */
export function resolveDeps(options: GraphDeps): GraphDeps {
  return {
    ...options,
    probe: options.probe ?? (options.createModel ? undefined : createCapabilityProbe()),
  };
}

/** Reports an event on LangGraph's `custom` stream; a run without one ignores it. */
export function customEmitter<E>(config: LangGraphRunnableConfig): (e: E) => void {
  return (e) => {
    try {
      config.writer?.(e);
    } catch {
      // No custom stream attached.
    }
  };
}

/** What a run needs to reach its model. */
export type ModelSettings = Omit<ChatModelSettings, "numCtx" | "thinking"> & {
  contextWindow: number;
  retries: number;
  retryBaseMs: number;
};

/**
 * The run's model, built on first use and then kept, and the retry policy of its calls. Every
 * caller passes the same num_ctx for a model (the window from `windowFor`): Ollama reloads a model
 * when num_ctx changes.
 */
export function runModel(
  config: LangGraphRunnableConfig,
  deps: GraphDeps,
  s: ModelSettings,
  onRetry?: RetryPolicy["onRetry"],
): { model: (fit?: ModelFit) => BaseChatModel; policy: RetryPolicy } {
  let model: BaseChatModel | undefined;
  return {
    model: (fit) =>
      (model ??= (deps.createModel ?? createOllamaChatModel)({
        ...s,
        numCtx: fit?.numCtx ?? s.contextWindow,
        ...(fit?.think !== undefined ? { thinking: fit.think } : {}),
      })),
    policy: {
      retries: s.retries,
      baseMs: s.retryBaseMs,
      url: s.ollamaUrl,
      model: s.model,
      signal: config.signal,
      ...(onRetry ? { onRetry } : {}),
    },
  };
}

/** The workspace's real path, resolved once per run (per settings object). */
const workspaces = new WeakMap<object, string>();
function runWorkspace(settings: Settings): string {
  let dir = workspaces.get(settings);
  if (dir === undefined) workspaces.set(settings, (dir = realWorkspace(settings.workspace)));
  return dir;
}

/**
 * The run's model as the server describes it (when a probe is configured: Ollama's /api/show,
 * cached) and what follows from it for every call of the run: the window and `think`.
 */
export async function modelFitOf(
  env: {
    settings: { ollamaUrl: string; model: string; contextWindow: number; think?: ThinkSetting };
    policy: RetryPolicy;
  },
  deps: GraphDeps,
): Promise<{ profile?: ModelProfile; window: number; fit: ModelFit }> {
  const s = env.settings;
  const profile = deps.probe ? await deps.probe(s.ollamaUrl, s.model, env.policy) : undefined;
  const window = windowFor(s.contextWindow, profile);
  const think = thinkFor(s.think ?? "auto", profile);
  return {
    ...(profile ? { profile } : {}),
    window,
    fit: { numCtx: window, ...(think !== undefined ? { think } : {}) },
  };
}

export function nodeEnv(config: LangGraphRunnableConfig, deps: GraphDeps): NodeEnv {
  const settings = settingsFrom(config);
  const emit = customEmitter<KeelEvent>(config);
  const { model, policy } = runModel(config, deps, settings, ({ attempt, delayMs, error }) =>
    emit({ type: "retry", attempt, delayMs, error: `${error.kind}: ${error.message}` }),
  );
  return { settings, model, workspace: runWorkspace(settings), emit, policy };
}
