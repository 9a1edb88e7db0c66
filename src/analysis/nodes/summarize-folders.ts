import path from "node:path";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { GraphDeps } from "../../run/model.js";
import { summarizeFolder, type Budgeted } from "../analyze-unit.js";
import type { AnalysisRecords, Manifest } from "../records.js";
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
        const outcome = await foldFolder(manifest, records, folder, budgeted);
        env.emit({
          type: "analysis",
          phase: "folders",
          done: ++done,
          total: state.folderTotal,
          current: folder,
          reused: outcome === "reused",
        });
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

/**
 * Summarises one folder from its files' findings and its subfolders' summaries, or reuses the
 * stored summary when nothing below it changed. Its files and subfolders must be done first.
 * Shared by this node and the distributed run, which folds folders as their units complete.
 */
export async function foldFolder(
  manifest: Manifest,
  records: AnalysisRecords,
  folder: string,
  budgeted: () => Promise<Budgeted>,
): Promise<"reused" | "analyzed" | "structural"> {
  if (!manifest.model) return "structural";
  const merkle = manifest.merkles[folder]!;
  const stored = await records.folder(folder);
  if (stored?.merkle === merkle && stored.model === manifest.model && stored.summary)
    return "reused";
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
  return "analyzed";
}
