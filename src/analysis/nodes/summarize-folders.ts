import path from "node:path";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { GraphDeps } from "../../run/model.js";
import { summarizeFolder } from "../analyze-unit.js";

import { analystStep } from "../runtime.js";
import type { AnalystStateUpdate, AnalystStateValue } from "../state.js";

const dirOf = (p: string) => path.posix.dirname(p);

/**
 * Summarises folders bottom-up (deepest first), `concurrency` at a time, from the findings of
 * their files and the summaries of their subfolders. A folder whose hash (over everything below
 * it) matches its stored summary is reused: a change re-summarises only the folders above it.
 * Without a model this step only walks the folders.
 */
export function createSummarizeFoldersNode(deps: GraphDeps) {
  return async (
    state: AnalystStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<AnalystStateUpdate> => {
    const { env, manifest, records, ...step } = await analystStep(config, deps, state);
    const budgeted = step.budgeted;
    // Subfolders must be finished first: take only folders of the same depth in one batch.
    const depth = (d: string) => (d === "." ? 0 : d.split("/").length);
    const first = manifest.folders[state.folderCursor]!;
    const batch = manifest.folders
      .slice(state.folderCursor, state.folderCursor + env.settings.concurrency)
      .filter((f) => depth(f) === depth(first));
    let done = state.folderCursor;

    const outcomes = await Promise.all(
      batch.map(async (folder) => {
        const merkle = manifest.merkles[folder]!;
        const stored = await records.folder(folder);
        let outcome: "reused" | "analyzed" | "structural" = "structural";
        const current = () =>
          env.emit({
            type: "analysis",
            phase: "folders",
            done: ++done,
            total: state.folderTotal,
            current: folder,
            reused: outcome === "reused",
          });
        if (!manifest.model) {
          current();
          return outcome;
        }
        if (stored?.merkle === merkle && stored.model === manifest.model && stored.summary) {
          outcome = "reused";
          current();
          return outcome;
        }
        const files = await Promise.all(
          manifest.files
            .filter((f) => dirOf(f.path) === folder)
            .map(async (f) => {
              const u = await records.unit(f.path);
              return `${f.path}: ${u?.finding ? `${u.finding.purpose} ${u.finding.summary}` : `(${f.lines} lines; no finding)`}`;
            }),
        );
        const subfolders = await Promise.all(
          manifest.folders
            .filter((d) => d !== folder && dirOf(d) === folder)
            .map(async (d) => {
              const r = await records.folder(d);
              return `${d}/: ${r?.summary ? `${r.summary.purpose} ${r.summary.summary}` : "(no summary)"}`;
            }),
        );
        const summary = await summarizeFolder(await budgeted(), folder, files, subfolders);
        await records.putFolder({
          path: folder,
          merkle,
          model: manifest.model,
          ...(summary ? { summary } : {}),
        });
        outcome = "analyzed";
        current();
        return outcome;
      }),
    );
    return {
      folderCursor: state.folderCursor + batch.length,
      foldersAnalyzed: state.foldersAnalyzed + outcomes.filter((o) => o !== "reused").length,
      foldersReused: state.foldersReused + outcomes.filter((o) => o === "reused").length,
      largestRequest: step.largest(),
    };
  };
}
