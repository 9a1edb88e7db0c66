/**
 * What one step of the analyst's units or folders takes: from its cursor, every item whose stored
 * record answers it (no work, reused in the same step) and up to a batch of items that need work.
 * A re-run with little changed thus costs a few steps, not one per item. Pure but for `read`.
 */

/** Items looked at in one step at most (a reused one costs a store read). */
export const STEP_SPAN = 512;
/** Units of a run without a model analysed in one step: their facts take milliseconds. */
export const STRUCTURAL_BATCH = 64;

export interface Step<R> {
  /** Where the step ends: every item before it is done when the step is. */
  end: number;
  reused: number[];
  work: number[];
  /** The stored record of each item looked at, by index. */
  stored: Map<number, R | undefined>;
}

/**
 * The step from `cursor`: items whose record `answers` them are reused; up to `batch` others are
 * work, while `joins` lets them share the step (folders: one depth at a time); within
 * `STEP_SPAN`. Records are read in growing slices (`batch`, then four times as many…), so a first
 * run reads about one record per item and a re-run with nothing changed `STEP_SPAN` a step.
 */
export async function stepOf<T, R>(
  items: readonly T[],
  cursor: number,
  batch: number,
  read: (items: T[]) => Promise<Array<R | undefined>>,
  answers: (item: T, r: R | undefined) => boolean,
  joins: (work: T[], item: T) => boolean = () => true,
): Promise<Step<R>> {
  const step: Step<R> = { end: cursor, reused: [], work: [], stored: new Map() };
  const work: T[] = [];
  const last = Math.min(items.length, cursor + STEP_SPAN);
  for (let size = batch; step.end < last; size *= 4) {
    const from = step.end;
    const records = await read(items.slice(from, Math.min(last, from + size)));
    for (const [k, r] of records.entries()) {
      const i = from + k;
      const item = items[i]!;
      if (answers(item, r)) step.reused.push(i);
      else if (work.length < batch && (work.length === 0 || joins(work, item))) {
        work.push(item);
        step.work.push(i);
      } else return step;
      step.stored.set(i, r);
      step.end = i + 1;
    }
    if (step.work.length === batch) return step; // full: the next step reads on from here
  }
  return step;
}
