/** What the analyst's nodes derive from their config: settings, store, records, model, budget. */
import path from "node:path";
import type { BaseStore, LangGraphRunnableConfig } from "@langchain/langgraph";
import {
  customEmitter,
  modelFitOf,
  runModel,
  type GraphDeps,
  type ModelFit,
} from "../run/model.js";
import type { ServerSettings } from "../run/settings.js";
import type { Budgeted } from "./analyze-unit.js";
import { analystSettingsFrom, type AnalystSettings } from "./context.js";
import { fingerprint, nothingChanged, reportPaths, type LastRun } from "./last-run.js";
import { AnalysisRecords } from "./records.js";
import type { AnalystStateValue } from "./state.js";

/** A progress event on LangGraph's `custom` stream. */
export interface AnalysisProgress {
  type: "analysis";
  phase: "units" | "folders" | "report";
  done: number;
  total: number;
  current: string;
  /** This item came from the store (unchanged since an earlier run). */
  reused: boolean;
  /** A distributed run's queue figures (in flight, failed, per worker, rate, ETA) as one line. */
  queue?: string;
}

export interface AnalystEnv {
  settings: AnalystSettings & ServerSettings;
  store: BaseStore;
  threadId: string;
  emit: (e: AnalysisProgress) => void;
  /** The model within the window for it (see `modelFitOf`), reporting each request's size. */
  budgeted: (onRequest: (tokens: number) => void) => Promise<Budgeted>;
}

export function analystEnv(config: LangGraphRunnableConfig, deps: GraphDeps): AnalystEnv {
  const settings = analystSettingsFrom(config);
  const store = config.store;
  if (!store)
    throw new Error(
      "the analyst graph needs a store for its findings: compile it with { store } (the LangGraph server provides one)",
    );
  const { model, policy } = runModel(config.signal, deps, settings);
  let fitted: Promise<{ window: number; fit: ModelFit }> | undefined;
  return {
    settings,
    store,
    threadId: String(config.configurable?.thread_id ?? "default"),
    emit: customEmitter<AnalysisProgress>(config),
    budgeted: async (onRequest) => {
      const { window, fit } = await (fitted ??= modelFitOf({ settings, policy, store }, deps));
      return {
        model: model(fit),
        window,
        onRequest,
        policy,
        maxTokens: settings.generationBudget.analyze,
      };
    },
  };
}

/**
 * What a step after enumerate works with: the run's manifest and records, and the model within
 * the budget (built when first asked for), which keeps track of the largest request.
 */
export async function analystStep(
  config: LangGraphRunnableConfig,
  deps: GraphDeps,
  state: Pick<AnalystStateValue, "target" | "largestRequest">,
) {
  const env = analystEnv(config, deps);
  let largest = state.largestRequest;
  // the folder the person asked for, not one the store names (the store is shared: manifest.ts)
  const manifest = await AnalysisRecords.manifest(
    env.store,
    env.threadId,
    path.resolve(env.settings.target),
  );
  const records = new AnalysisRecords(env.store, state.target);
  const reports = reportPaths(state.target, env.settings.out);
  return {
    env,
    manifest,
    records,
    reports,
    /** The report's fingerprint now (its inputs, the records' epoch). */
    fingerprint: async () =>
      fingerprint(manifest, env.settings.depth, reports.md, await records.epoch()),
    /** The last complete run, when nothing changed since it: the step has nothing to do. */
    async unchanged(): Promise<LastRun | undefined> {
      const last = await records.lastRun();
      return nothingChanged(last, await this.fingerprint()) ? last : undefined;
    },
    /** The model within the budget; probes the model on first use only (a run without one never does). */
    budgeted: () => env.budgeted((t) => (largest = Math.max(largest, t))),
    largest: () => largest,
  };
}

/**
 * A step with nothing to do since the last run saw the same (last-run.ts): one progress event for
 * all its items, and the step's update.
 */
export function nothingToDo<U>(
  env: AnalystEnv,
  phase: "units" | "folders",
  total: number,
  update: U,
): U {
  env.emit({
    type: "analysis",
    phase,
    done: total,
    total,
    current: "nothing changed since the last run",
    reused: true,
  });
  return update;
}
