/**
 * What every node derives from its config: the run settings, the model, the retry policy and the
 * workspace root. Nodes stay thin by asking for this once.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseStore, LangGraphRunnableConfig } from "@langchain/langgraph";
import type { RetryPolicy } from "../models/retry.js";
import { customEmitter, runModel, type GraphDeps, type ModelFit } from "../run/model.js";
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
  model: (fit?: ModelFit) => BaseChatModel;
  policy: RetryPolicy;
  workspace: string;
  emit: (e: KeelEvent) => void;
  /** The run's MCP tools (`.mcp.json` and the settings' `mcpServers`), connected on first use. */
  mcpTools: () => Promise<KeelTool[]>;
  /** The run's store, if the graph has one (what keel remembers of servers, the ledger). */
  store: BaseStore | undefined;
}

/** Runs (settings objects) whose MCP failures were already reported. */
const reported = new WeakSet<object>();

/** The workspace's real path, resolved once per run (per settings object). */
const workspaces = new WeakMap<object, string>();
function runWorkspace(settings: Settings): string {
  let dir = workspaces.get(settings);
  if (dir === undefined) workspaces.set(settings, (dir = realWorkspace(settings.workspace)));
  return dir;
}

/**
 * The run's MCP servers, read once per run (per settings object): a `.mcp.json` the agent writes
 * mid-run does not change the run's servers, and a turn does not read the file again.
 */
const mcpSets = new WeakMap<object, McpServerSet>();
function runMcpServers(settings: Settings, workspace: string): McpServerSet {
  let set = mcpSets.get(settings);
  if (!set) mcpSets.set(settings, (set = mcpServersOf(workspace, settings.mcpServers)));
  return set;
}

export function nodeEnv(config: LangGraphRunnableConfig, deps: GraphDeps): NodeEnv {
  const settings = settingsFrom(config);
  const emit = customEmitter<KeelEvent>(config);
  const { model, policy } = runModel(config, deps, settings, ({ attempt, delayMs, error }) =>
    emit({ type: "retry", attempt, delayMs, error: `${error.kind}: ${error.message}` }),
  );
  const workspace = runWorkspace(settings);
  const mcpTools = async () => {
    const set = runMcpServers(settings, workspace);
    const session = await mcpSession(set.servers, workspace, new Set(ALL_TOOLS.map((t) => t.name)));
    if (!reported.has(settings)) {
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
    }
    return session.tools;
  };
  return { settings, model, workspace, emit, policy, mcpTools, store: config.store };
}
