import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { GraphDeps } from "../../run/model.js";
import { analyzeUnit } from "../analyze-unit.js";
import { readUnit } from "../enumerate.js";
import type { UnitRecord } from "../records.js";
import { analystStep } from "../runtime.js";
import type { AnalystStateUpdate, AnalystStateValue } from "../state.js";
import { factsOf } from "../structure.js";

/**
 * Analyses the next `concurrency` units at once (one step, so one checkpoint per batch) and stores
 * each finding as soon as it exists. A unit whose content, model and depth match a stored finding
 * is reused without a model call — after a crash, the unit in flight is the only one redone.
 */
export function createAnalyzeUnitsNode(deps: GraphDeps) {
  return async (
    state: AnalystStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<AnalystStateUpdate> => {
    const { env, manifest, records, ...step } = await analystStep(config, deps, state);
    const batch = manifest.files.slice(state.cursor, state.cursor + env.settings.concurrency);
    const paths = new Set(manifest.files.map((f) => f.path));
    const budgeted = step.budgeted;
    let done = state.cursor;

    const outcomes = await Promise.all(
      batch.map(async (unit) => {
        const stored = await records.unit(unit.path);
        const fresh = stored?.hash === unit.hash;
        const reusable =
          fresh &&
          (!manifest.model ||
            (stored.model === manifest.model &&
              stored.depth === env.settings.depth &&
              stored.finding));
        const progress = (reused: boolean) =>
          env.emit({
            type: "analysis",
            phase: "units",
            done: ++done,
            total: state.total,
            current: unit.path,
            reused,
          });
        if (reusable) {
          progress(true);
          return "reused" as const;
        }
        const text = await readUnit(state.target, unit.path);
        const facts = fresh ? stored.facts : await factsOf(unit, text, paths);
        const record: UnitRecord = { path: unit.path, hash: unit.hash, facts };
        let outcome: "analyzed" | "failed" | "structural" = "structural";
        if (manifest.model) {
          const finding = await analyzeUnit(
            await budgeted(),
            unit,
            text,
            facts,
            env.settings.depth,
          );
          Object.assign(record, { model: manifest.model, depth: env.settings.depth });
          if (finding) record.finding = finding;
          else record.failed = "the model's answer did not match the finding schema twice";
          outcome = finding ? "analyzed" : "failed";
        }
        await records.putUnit(record);
        progress(false);
        return outcome;
      }),
    );
    const count = (k: string) => outcomes.filter((o) => o === k).length;
    return {
      cursor: state.cursor + batch.length,
      analyzed: state.analyzed + count("analyzed") + count("structural"),
      reused: state.reused + count("reused"),
      failed: state.failed + count("failed"),
      largestRequest: step.largest(),
    };
  };
}
