/**
 * The learning ledger in the run's LangGraph store: one tally per finished run, under
 * ["keel", "ledger", <model>]. What ran the run writes it when the run ends (`recordRunEnd`); a new request reads its model's tallies
 * to choose the lines its tool descriptions get; keel stats shows every model's lessons.
 */
import type { BaseStore, LangGraphRunnableConfig } from "@langchain/langgraph";
import { settingsFrom } from "../context.js";
import type { CoderStateValue } from "../state.js";
import { fieldsOf } from "../../tools/registry.js";
import { judgeLessons, tallyOf, type LessonState, type Tally } from "./lessons.js";
import { runRecord } from "./run-record.js";

const NS = ["keel", "ledger"];

/** A model name as a namespace label (LangGraph's stores refuse "." and ":" in labels). */
const label = (model: string) =>
  model.replace(/[%.:]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const modelOf = (label: string) => decodeURIComponent(label);
/** The newest tallies a judgement reads. */
const MAX_TALLIES = 2000;

export async function readTallies(store: BaseStore, model: string): Promise<Tally[]> {
  const items = await store.search([...NS, label(model)], { limit: MAX_TALLIES });
  return items.map((i) => i.value as Tally);
}

/** Records a finished run's tally (nothing for a run without a model turn). */
export async function recordRun(
  store: BaseStore,
  thread: string,
  state: CoderStateValue,
): Promise<void> {
  const at = new Date().toISOString();
  const run = runRecord(thread, at, state);
  if (!run || run.model === "unknown") return;
  const shown = Object.values(state.lessons).map((l) => l.key);
  await store.put([...NS, label(run.model)], `${thread}:${at}`, tallyOf(run, shown));
}

/** A model's lessons, judged from its tallies. */
export async function lessonsOf(store: BaseStore, model: string): Promise<LessonState[]> {
  return judgeLessons(await readTallies(store, model), fieldsOf);
}

/** Every model's lessons in the store. */
export async function allLessons(
  store: BaseStore,
): Promise<Array<LessonState & { model: string }>> {
  const namespaces = await store.listNamespaces({ prefix: NS, maxDepth: 3 });
  const out: Array<LessonState & { model: string }> = [];
  for (const ns of namespaces) {
    const model = ns[2] === undefined ? undefined : modelOf(ns[2]);
    if (model) out.push(...(await lessonsOf(store, model)).map((l) => ({ ...l, model })));
  }
  return out;
}

/**
 * A finished run's tally into the ledger of the store it ran with, when learning is on (settings
 * `learnDescriptions`). Called by whoever ran the graph, once the run is over (`keel run`'s
 * session, `runAgent`): a run still going (waiting for a person, stopped by Ctrl-C) records
 * nothing. The ledger is a help, never a failure of the run.
 */
export async function recordRunEnd(
  state: CoderStateValue | undefined,
  config: LangGraphRunnableConfig,
): Promise<void> {
  const thread: unknown = config.configurable?.thread_id;
  if (!state || state.status === "running") return;
  if (!config.store || typeof thread !== "string" || !settingsFrom(config).learnDescriptions)
    return;
  await recordRun(config.store, thread, state).catch(() => undefined);
}
