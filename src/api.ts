/**
 * Helpers for the common case of running keel's graphs from code. For streaming, interrupts or
 * your own persistence, build the graphs directly (`createCoderGraph`, `createAnalystGraph`).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { HumanMessage } from "@langchain/core/messages";
import {
  InMemoryStore,
  MemorySaver,
  type BaseCheckpointSaver,
  type BaseStore,
} from "@langchain/langgraph";
import { isolationNotice } from "./sandbox/runtime.js";
import { runConfig, type SettingsInput } from "./coder/context.js";
import { createCoderGraph } from "./coder/graph.js";
import { recordRunEnd } from "./coder/learning/ledger.js";
import type { GraphDeps } from "./run/model.js";
import type { CoderStateValue } from "./coder/state.js";
import { analystRunConfig, type AnalystSettingsInput } from "./analyst/context.js";
import { createAnalystGraph } from "./analyst/graph.js";
import type { AnalysisReport } from "./analyst/report.js";
import type { AnalystStateValue } from "./analyst/state.js";
import { withMcpScope } from "./mcp/session.js";

export interface RunAgentOptions extends SettingsInput, GraphDeps {
  /** Thread to start or continue (default: a new one). */
  threadId?: string;
  /** Where checkpoints go (default: in memory). */
  checkpointer?: BaseCheckpointSaver;
  /** Where the side-effect journal goes (default: in memory). */
  store?: BaseStore;
  /** Stops the run: the model request in flight is cancelled, and the run's MCP servers closed. */
  signal?: AbortSignal;
}

/**
 * Runs the coder agent on one request and returns its final state (`status`, `summary`,
 * `filesWritten`, `trail`…), and leaves the run's tally in the store's learning ledger (settings
 * `learnDescriptions`). Throws `ModelServerError` when the model server fails for good.
 *
 * @example
 * ```ts
 * const state = await runAgent("Create hello.py that prints hi", { workspace: "./demo", model: "qwen3:8b" });
 * console.log(state.status, state.filesWritten);
 * ```
 */
export async function runAgent(
  request: string,
  opts: RunAgentOptions = {},
): Promise<CoderStateValue> {
  const { threadId, checkpointer, store, createModel, probe, signal, ...settings } = opts;
  const runStore = store ?? new InMemoryStore();
  const graph = createCoderGraph({ createModel, probe }).compile({
    checkpointer: checkpointer ?? new MemorySaver(),
    store: runStore,
  });
  const config = runConfig(threadId ?? randomUUID(), settings);
  // Commands without the OS sandbox are said once per run, as the CLI says it.
  const notice = await isolationNotice(config.context.runCommandsUnsandboxed);
  if (notice) process.emitWarning(notice, "KeelSandboxWarning");
  // The MCP servers the run starts are its own: closed when it returns, throws or is aborted.
  const state = (await withMcpScope(() =>
    graph.invoke(
      { messages: [new HumanMessage(request)] },
      { ...config, ...(signal ? { signal } : {}) },
    ),
  )) as CoderStateValue;
  // The run's tally for the learning ledger, once it is over (a run waiting for a person is not).
  await recordRunEnd(state, { ...config, store: runStore });
  return state;
}

export interface RunAnalysisOptions extends Omit<AnalystSettingsInput, "target">, GraphDeps {
  threadId?: string;
  checkpointer?: BaseCheckpointSaver;
  /** Where findings go (default: in memory; pass a SqliteStore to keep them across runs). */
  store?: BaseStore;
}

/**
 * Analyses a folder and returns the final state with the report (also written to disk). Without a
 * reachable model, or with `model: "none"`, the report is structural and says so.
 *
 * @example
 * ```ts
 * const { report } = await runAnalysis("./src", { model: "none" });
 * console.log(report.hotspots.mostImported);
 * ```
 */
export async function runAnalysis(
  dir: string,
  opts: RunAnalysisOptions = {},
): Promise<AnalystStateValue & { report: AnalysisReport }> {
  const { threadId, checkpointer, store, createModel, probe, ...settings } = opts;
  const graph = createAnalystGraph({ createModel, probe }).compile({
    checkpointer: checkpointer ?? new MemorySaver(),
    store: store ?? new InMemoryStore(),
  });
  const state = (await graph.invoke(
    {},
    analystRunConfig(threadId ?? randomUUID(), { ...settings, target: dir }),
  )) as AnalystStateValue;
  return { ...state, report: JSON.parse(readFileSync(state.jsonPath!, "utf8")) as AnalysisReport };
}
