/** What the analyst's nodes derive from their config: settings, store, records, model, budget. */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseStore, LangGraphRunnableConfig } from "@langchain/langgraph";
import { createOllamaChatModel } from "../models/chat-model.js";
import type { GraphDeps } from "../agent/runtime.js";
import type { Budgeted } from "./analyze-unit.js";
import { analystSettingsFrom, type AnalystSettings } from "./context.js";
import { AnalysisRecords } from "./records.js";

/** A progress event on LangGraph's `custom` stream. */
export interface AnalysisProgress {
  type: "analysis";
  phase: "units" | "folders" | "report";
  done: number;
  total: number;
  current: string;
  /** This item came from the store (unchanged since an earlier run). */
  reused: boolean;
}

export interface AnalystEnv {
  settings: AnalystSettings & { ollamaUrl: string };
  store: BaseStore;
  threadId: string;
  emit: (e: AnalysisProgress) => void;
  records: (target: string) => AnalysisRecords;
  budgeted: (onRequest: (tokens: number) => void) => Budgeted;
}

export function analystEnv(config: LangGraphRunnableConfig, deps: GraphDeps): AnalystEnv {
  const settings = analystSettingsFrom(config);
  const store = config.store;
  if (!store)
    throw new Error(
      "the analyst graph needs a store for its findings: compile it with { store } (the LangGraph server provides one)",
    );
  let model: BaseChatModel | undefined;
  const getModel = () =>
    (model ??= (deps.createModel ?? createOllamaChatModel)({
      ...settings,
      numCtx: settings.contextWindow,
    }));
  return {
    settings,
    store,
    threadId: String(config.configurable?.thread_id ?? "default"),
    emit: (e) => {
      try {
        config.writer?.(e);
      } catch {
        // no custom stream attached
      }
    },
    records: (target) => new AnalysisRecords(store, target),
    budgeted: (onRequest) => ({
      model: getModel(),
      window: settings.contextWindow,
      onRequest,
      policy: {
        retries: settings.retries,
        baseMs: settings.retryBaseMs,
        url: settings.ollamaUrl,
        model: settings.model,
        signal: config.signal,
      },
    }),
  };
}
