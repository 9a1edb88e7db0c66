/**
 * A model's token calibration (history/calibrate.ts) remembered in the run's LangGraph store, under
 * ["keel", "calibration"] keyed by the model's name: a new thread with a model keel has seen starts
 * from what its server counted before, instead of the conservative prices. Stored by class name,
 * so a changed class list keeps what still applies. A store that cannot be read or written is no
 * failure of the run.
 */
import type { BaseStore } from "@langchain/langgraph";
import { TOKEN_CLASSES } from "../../guard/token-estimate.js";
import { scalesOf } from "./calibrate.js";

const NS = ["keel", "calibration"];

interface Stored {
  model: string;
  /** Server tokens per keel-estimated token, by class name. */
  scales: Record<string, number>;
  at: string;
}

/** The model's remembered calibration (indexed as `TOKEN_CLASSES`), or undefined when none. */
export async function learnedScales(
  store: BaseStore | undefined,
  model: string,
): Promise<number[] | undefined> {
  if (!store) return undefined;
  try {
    const item = await store.get(NS, model);
    const v = item?.value as Stored | undefined;
    if (!v?.scales) return undefined;
    return scalesOf(TOKEN_CLASSES.map((c) => v.scales[c] ?? 1));
  } catch {
    return undefined;
  }
}

/** Remembers `scales` (indexed as `TOKEN_CLASSES`) for `model`. */
export async function rememberScales(
  store: BaseStore | undefined,
  model: string,
  scales: readonly number[],
): Promise<void> {
  if (!store) return;
  const value: Stored = {
    model,
    scales: Object.fromEntries(TOKEN_CLASSES.map((c, k) => [c, scales[k] ?? 1])),
    at: new Date().toISOString(),
  };
  await store.put(NS, model, value as unknown as Record<string, unknown>).catch(() => undefined);
}
