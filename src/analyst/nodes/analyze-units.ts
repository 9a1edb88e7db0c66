import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { GraphDeps } from "../../run/model.js";
import { analyzeUnit, type Budgeted } from "../analyze-unit.js";
import type { FileUnit } from "../enumerate.js";
import type { Manifest, UnitRecord } from "../records.js";
import { analystStep, nothingToDo } from "../runtime.js";
import type { AnalystStateUpdate, AnalystStateValue } from "../state.js";
import { factsOf, NO_FACTS } from "../structure.js";
import { unitTextReader } from "../unit-text.js";
import { STRUCTURAL_BATCH, stepOf } from "../steps.js";

/** A stored record that answers this unit in this run: same text, and the same model's finding. */
export function reusable(
  stored: UnitRecord | undefined,
  model: string | null,
  depth: string,
): stored is UnitRecord {
  return Boolean(
    stored && (!model || (stored.model === model && stored.depth === depth && stored.finding)),
  );
}

/**
 * Analyses the next `concurrency` units that need it at once (one step, so one checkpoint per
 * batch; without a model, `STRUCTURAL_BATCH` units) and stores each finding as soon as it exists;
 * the units before and between them whose text, model and depth match a stored finding are
 * reused in the same step, without a model call — so a re-run with little changed costs a few
 * steps, and after a crash only the units in flight are redone.
 */
export function createAnalyzeUnitsNode(deps: GraphDeps) {
  return async (
    state: AnalystStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<AnalystStateUpdate> => {
    const { env, manifest, records, ...step } = await analystStep(config, deps, state);
    const depth = env.settings.depth;
    if (state.cursor === 0 && (await step.unchanged()))
      return nothingToDo(env, "units", state.total, {
        cursor: state.total,
        reused: state.reused + state.total,
      });
    const { end, work, reused, stored } = await stepOf<FileUnit, UnitRecord>(
      manifest.files,
      state.cursor,
      manifest.model ? env.settings.concurrency : STRUCTURAL_BATCH,
      (units) => records.units(units),
      (_, r) => reusable(r, manifest.model, depth),
    );
    let done = state.cursor;
    const progress = (unit: FileUnit, wasReused: boolean) =>
      env.emit({
        type: "analysis",
        phase: "units",
        done: ++done,
        total: state.total,
        current: unit.path,
        reused: wasReused,
      });
    for (const i of reused) progress(manifest.files[i]!, true);
    const analyse = unitAnalysis(manifest, env.settings.depth, records, step.budgeted);
    const outcomes = await Promise.all(
      work.map(async (i) => {
        const outcome = await analyse(manifest.files[i]!, stored.get(i));
        progress(manifest.files[i]!, false);
        return outcome;
      }),
    );
    if (work.length) await records.bumpEpoch();
    const count = (k: string) => outcomes.filter((o) => o === k).length;
    return {
      // the manifest may hold fewer entries than listed (entries refused on reading): all done
      cursor: end >= manifest.files.length ? state.total : end,
      analyzed: state.analyzed + count("analyzed") + count("structural"),
      reused: state.reused + reused.length,
      failed: state.failed + count("failed"),
      largestRequest: step.largest(),
    };
  };
}

/** One unit's facts and, with a model, its finding, stored under the hash of the text read. */
function unitAnalysis(
  manifest: Manifest,
  depth: "quick" | "deep",
  records: { putUnit(r: UnitRecord): Promise<void> },
  budgeted: () => Promise<Budgeted>,
) {
  let paths: ReadonlySet<string> | undefined;
  const read = unitTextReader(manifest.target);
  return async (
    unit: FileUnit,
    stored: UnitRecord | undefined,
  ): Promise<"analyzed" | "failed" | "structural"> => {
    const got = await read(unit);
    if ("refused" in got) {
      await records.putUnit({
        path: unit.path,
        hash: unit.hash,
        facts: stored?.facts ?? NO_FACTS,
        ...(manifest.model ? { model: manifest.model, depth } : {}),
        failed: got.refused,
      });
      return "failed";
    }
    const facts =
      stored?.facts ??
      (await factsOf(unit, got.text, (paths ??= new Set(manifest.files.map((f) => f.path)))));
    const record: UnitRecord = { path: unit.path, hash: unit.hash, facts };
    if (!manifest.model) {
      await records.putUnit(record);
      return "structural";
    }
    const finding = await analyzeUnit(await budgeted(), unit, got.text, facts, depth);
    Object.assign(record, { model: manifest.model, depth });
    if (finding) record.finding = finding;
    else record.failed = "the model's answer did not match the finding schema twice";
    await records.putUnit(record);
    return finding ? "analyzed" : "failed";
  };
}
