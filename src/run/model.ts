/**
 * What every run of keel's graphs derives from its config and dependencies, the coder's and the
 * analyst's: the chat model (built once per run, with one num_ctx), the capability probe, the
 * window and `think` for the model, the retry policy, and the custom-stream emitter.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseStore, LangGraphRunnableConfig } from "@langchain/langgraph";
import {
  thinkFor,
  windowFor,
  type CapabilityProbe,
  type ModelProfile,
  type ThinkSetting,
} from "../models/capabilities.js";
import { createCapabilityProbe } from "../models/probe.js";
import {
  createChatModel,
  loadProvider,
  type ChatModelFactory,
  type ChatModelSettings,
} from "../models/chat-model.js";
import type { RetryPolicy } from "../models/retry.js";
import { serverMemory } from "./server-memory.js";
import type { Provider } from "../models/provider.js";

/** Dependencies a graph is built with. Defaults talk to Ollama; tests and library users swap them. */
export interface GraphDeps {
  /** Builds the chat model for a run (default: ChatOllama with keel's repairing fetch). */
  createModel?: ChatModelFactory;
  /** Reads a model's capabilities (tool mode, text format). Default: Ollama's /api/show, cached; none for a custom model. */
  probe?: CapabilityProbe;
}

/** What the model of a run is built with once the model's profile is known. */
export interface ModelFit {
  /** num_ctx: the run's window for this model (see `windowFor`). */
  numCtx?: number;
  think?: ChatModelSettings["thinking"];
  /** provider openai: which server it is (its quirks). */
  server?: ChatModelSettings["server"];
  /** provider openai: what keel remembers of the server (server-memory.ts). */
  memory?: ChatModelSettings["memory"];
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

/** The retry policy of a model's calls (and of the probe's), from the run's settings. */
export function retryPolicy(
  s: ModelSettings,
  signal?: AbortSignal,
  onRetry?: RetryPolicy["onRetry"],
): RetryPolicy {
  return {
    retries: s.retries,
    baseMs: s.retryBaseMs,
    url: s.serverUrl ?? s.ollamaUrl,
    model: s.model,
    timeoutMs: s.requestTimeoutMs,
    ...(s.provider ? { provider: s.provider } : {}),
    ...(s.apiKey ? { apiKey: s.apiKey } : {}),
    ...(signal ? { signal } : {}),
    ...(onRetry ? { onRetry } : {}),
  };
}

/**
 * The run's model, built on first use and then kept, and the retry policy of its calls. Every
 * caller passes the same num_ctx for a model (the window from `windowFor`): Ollama reloads a model
 * when num_ctx changes.
 */
export function runModel(
  signal: AbortSignal | undefined,
  deps: GraphDeps,
  s: ModelSettings,
  onRetry?: RetryPolicy["onRetry"],
): { model: (fit?: ModelFit) => BaseChatModel; policy: RetryPolicy } {
  let model: BaseChatModel | undefined;
  return {
    model: (fit) =>
      (model ??= (deps.createModel ?? createChatModel)({
        ...s,
        numCtx: fit?.numCtx ?? s.contextWindow,
        ...(fit?.think !== undefined ? { thinking: fit.think } : {}),
        ...(fit?.server ? { server: fit.server } : {}),
        ...(fit?.memory ? { memory: fit.memory } : {}),
      })),
    policy: retryPolicy(s, signal, onRetry),
  };
}

/**
 * The run's model as the server describes it (when a probe is configured: Ollama's /api/show,
 * cached) and what follows from it for every call of the run: the window and `think`; for an
 * OpenAI-compatible server, what the store remembers of it (the arguments it rejects). `name` is
 * the model as the server names it, the key of what keel remembers per model (calibration,
 * lessons, the runs in `keel stats`): a llama-server serving one model answers to any name, so
 * without `-m` the run's name would be keel's default, whatever file the server loaded.
 */
export async function modelFitOf(
  env: {
    settings: {
      provider?: Provider;
      serverUrl: string;
      model: string;
      contextWindow: number;
      think?: ThinkSetting;
    };
    policy: RetryPolicy;
    /** The run's store, where keel remembers servers. */
    store?: BaseStore | undefined;
  },
  deps: GraphDeps,
): Promise<{ profile?: ModelProfile; window: number; fit: ModelFit; name: string }> {
  const s = env.settings;
  await loadProvider(s.provider);
  const profile = deps.probe ? await deps.probe(s.serverUrl, s.model, env.policy) : undefined;
  const window = windowFor(s.contextWindow, profile);
  const think = thinkFor(s.think ?? "auto", profile);
  return {
    ...(profile ? { profile } : {}),
    name: profile?.model ?? s.model,
    window,
    fit: {
      numCtx: window,
      ...(think !== undefined ? { think } : {}),
      ...(profile?.server ? { server: profile.server } : {}),
      ...(s.provider === "openai" ? { memory: await serverMemory(env.store, s.serverUrl) } : {}),
    },
  };
}
