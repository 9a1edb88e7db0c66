/**
 * What every node derives from its config: the run settings, the model, the retry policy and the
 * workspace root. Nodes stay thin by asking for this once.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseStore, LangGraphRunnableConfig } from "@langchain/langgraph";
import type { RetryPolicy } from "../models/retry.js";
import {
  customEmitter,
  modelFitOf,
  runModel,
  type GraphDeps,
  type ModelFit,
} from "../run/model.js";
import { chooseToolMode, type ToolMode } from "../models/capabilities.js";
import { cacheShift } from "../models/openai/quirks.js";
import { serverTokenCounter, type TokenCounter } from "../models/token-count.js";
import type { FormatName } from "../models/tool-calls/types.js";
import { promptFormat } from "./turn/tool-prompt.js";
import type { ServerSettings } from "../run/settings.js";
import { approveHint } from "../mcp/approval.js";
import { mcpServersOf, type McpServerSet } from "../mcp/servers.js";
import { mcpSession } from "../mcp/session.js";
import { ALL_TOOLS } from "../tools/registry.js";
import type { KeelTool } from "../tools/types.js";
import { realWorkspace } from "../tools/workspace-path.js";
import { settingsFrom, type Settings } from "./context.js";

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
  /**
   * The server cut the prompt (its count `reported` under `numCtx`), or `refused` it as over its
   * context (llama.cpp, vLLM); keel refits and asks again.
   */
  | {
      type: "truncated";
      /** The server's count of the prompt; absent when a refusal named none (Ollama). */
      reported?: number;
      numCtx: number;
      estimated: number;
      refused?: boolean;
    }
  /**
   * `cacheReuse` does nothing on this server and model: a fold's kept turns were evaluated again
   * (`cached` of the `kept` tokens before the record); the thread folds plainly from now on.
   */
  | { type: "unshifted"; cached: number; kept: number }
  /** The reply was still thinking at the run's `thinkCut`: asked again without thinking, the thought given. */
  | { type: "thought-cut"; tokens: number }
  /** The server's tool channel failed for this turn; it is asked again with tools in the prompt. */
  | { type: "tool-channel"; reason: string; pinned: boolean }
  /** An MCP server could not start or list its tools; the run goes on without them. */
  | { type: "mcp-failed"; server: string; target: string; detail: string }
  | { type: "mcp-unapproved"; servers: string[]; approve: string }
  /** A changing step ran without an undo snapshot (no git, or the shadow repository failed). */
  | { type: "undo-unavailable"; detail: string }
  /** The run's MCP tools and the share of the window their schemas take. */
  | { type: "mcp-tools"; tools: number; tokens: number; share: number };

export interface NodeEnv {
  settings: Settings & ServerSettings;
  /** The run's model, its fit and what follows for every call (`RunFit`), asked once a run. */
  fit: () => Promise<RunFit>;
  policy: RetryPolicy;
  workspace: string;
  emit: (e: KeelEvent) => void;
  /** The run's MCP tools (`.mcp.json` and the settings' `mcpServers`), connected on first use. */
  mcpTools: () => Promise<KeelTool[]>;
  /** The run's store, if the graph has one (what keel remembers of servers, the ledger). */
  store: BaseStore | undefined;
}

/**
 * `modelFitOf`'s answer for the run (window, fit, name, profile), the chat model built with that
 * fit, how the run drives it (`drive`: the tool channel before any pin, the prompt-mode format, the
 * server's cache shift), and the server's own token counter for big tool results, where it has one.
 */
export type RunFit = Awaited<ReturnType<typeof modelFitOf>> & {
  chat: BaseChatModel;
  drive: { channel: ToolMode; format: FormatName; reuse: number | undefined };
  counter?: TokenCounter;
};

/**
 * What a run resolves once and each of its steps reuses: the workspace's real path, the model, its
 * fit, the MCP tools, the retry policy but for the step's signal. A run is its settings object
 * (parsed once per run, `parseSettings`) and the stream it reports to: a step of another graph
 * (other deps) or of another invoke of the same context (another writer) resolves its own.
 */
interface RunWorld extends Omit<NodeEnv, "settings" | "store"> {
  writer: LangGraphRunnableConfig["writer"];
}
const worlds = new WeakMap<object, WeakMap<GraphDeps, RunWorld>>();

export function nodeEnv(config: LangGraphRunnableConfig, deps: GraphDeps): NodeEnv {
  const settings = settingsFrom(config);
  let byDeps = worlds.get(settings);
  if (!byDeps) worlds.set(settings, (byDeps = new WeakMap()));
  let world = byDeps.get(deps);
  if (!world || world.writer !== config.writer)
    byDeps.set(deps, (world = runWorld(config, deps, settings)));
  const { writer: _, ...env } = world;
  // the step's signal (LangGraph gives each step its own), the rest of the run's policy
  const policy = config.signal ? { ...env.policy, signal: config.signal } : env.policy;
  return { ...env, settings, policy, store: config.store };
}

/** A run's world (`RunWorld`), resolved at its first step. */
function runWorld(
  config: LangGraphRunnableConfig,
  deps: GraphDeps,
  settings: Settings & ServerSettings,
): RunWorld {
  const emit = customEmitter<KeelEvent>(config);
  const { model, policy } = runModel(undefined, deps, settings, ({ attempt, delayMs, error }) =>
    emit({ type: "retry", attempt, delayMs, error: `${error.kind}: ${error.message}` }),
  );
  const workspace = realWorkspace(settings.workspace);
  let fitted: Promise<RunFit> | undefined;
  const fit = () =>
    (fitted ??= runFitOf(settings, { model, policy, store: config.store }, deps).catch(
      (e: unknown) => {
        fitted = undefined; // a server down at the first step is asked again at the next
        throw e;
      },
    ));
  const mcpTools = runMcpTools(settings, workspace, emit);
  return { writer: config.writer, fit, policy, workspace, emit, mcpTools };
}

/** `RunFit`: the model's fit, the model built with it, how it is driven, the token counter. */
async function runFitOf(
  settings: Settings & ServerSettings,
  run: {
    model: (fit: ModelFit) => BaseChatModel;
    policy: RetryPolicy;
    store: BaseStore | undefined;
  },
  deps: GraphDeps,
): Promise<RunFit> {
  const fitted = await modelFitOf({ settings, policy: run.policy, store: run.store }, deps);
  const counter = serverTokenCounter({
    provider: settings.provider,
    ...(fitted.profile?.server ? { server: fitted.profile.server } : {}),
    baseUrl: settings.serverUrl,
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    model: settings.model,
  });
  const chosen = settings.toolFormat;
  const drive = {
    channel: chooseToolMode(fitted.profile, settings.toolMode),
    format: promptFormat(chosen !== "auto" ? chosen : (fitted.profile?.format ?? "hermes")),
    reuse: cacheShift({ ...fitted.fit, cacheReuse: settings.cacheReuse }),
  };
  return { ...fitted, chat: run.model(fitted.fit), drive, ...(counter ? { counter } : {}) };
}

/**
 * The run's MCP servers, read once per run (per settings object, across its invokes: a resumed
 * run too): a `.mcp.json` the agent writes mid-run does not change the run's servers, and a turn
 * does not read the file again. Runs whose failures and unapproved servers were reported.
 */
const mcpSets = new WeakMap<object, McpServerSet>();
const reported = new WeakSet<object>();

/**
 * The run's MCP tools; with no server, no session. A session belongs to the MCP scope of the
 * invoke (mcp/session.ts), so each step asks for it; what failed or waits for approval is
 * reported once a run.
 */
function runMcpTools(
  settings: Settings,
  workspace: string,
  emit: (e: KeelEvent) => void,
): () => Promise<KeelTool[]> {
  return async () => {
    let set = mcpSets.get(settings);
    if (!set) mcpSets.set(settings, (set = mcpServersOf(workspace, settings.mcpServers)));
    if (!Object.keys(set.servers).length && !set.unapproved.length) return [];
    const session = await mcpSession(set.servers, workspace, new Set(ALL_TOOLS.map((t) => t.name)));
    if (reported.has(settings)) return session.tools;
    reported.add(settings);
    if (set.unapproved.length)
      emit({
        type: "mcp-unapproved",
        servers: set.unapproved,
        approve: approveHint(set.unapproved),
      });
    for (const f of session.failures) emit({ type: "mcp-failed", ...f });
    const tokens = session.servers.reduce((n, s) => n + s.tokens, 0);
    if (session.tools.length)
      emit({
        type: "mcp-tools",
        tools: session.tools.length,
        tokens,
        share: tokens / settings.contextWindow,
      });
    return session.tools;
  };
}
