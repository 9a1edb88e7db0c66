import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { GraphDeps } from "../../run/model.js";
import { summarizeFolder, type Budgeted } from "../analyze-unit.js";
import {
  folderIndex,
  type AnalysisRecords,
  type FolderIndex,
  type FolderRecord,
  type Manifest,
} from "../records.js";
import { analystStep, nothingToDo } from "../runtime.js";
import type { AnalystStateUpdate, AnalystStateValue } from "../state.js";
import { stepOf } from "../steps.js";

const depthOf = (d: string) => (d === "." ? 0 : d.split("/").length);

/** A stored summary that answers this folder: nothing below it changed, the same model. */
export const folderReusable = (m: Manifest, folder: string, r: FolderRecord | undefined) =>
  Boolean(r?.summary && r.merkle === m.merkles[folder] && r.model === m.model);

/**
 * Summarises folders bottom-up (deepest first), `concurrency` of one depth at a time, from the
 * findings of their files and the summaries of their subfolders. A folder whose hash (over
 * everything below it) matches its stored summary is reused in the same step, without a model
 * call: a change re-summarises only the folders above it. Without a model there is nothing to
 * summarise: one step passes every folder.
 */
export function createSummarizeFoldersNode(deps: GraphDeps) {
  return async (
    state: AnalystStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<AnalystStateUpdate> => {
    const { env, manifest, records, ...step } = await analystStep(config, deps, state);
    if (!manifest.model) {
      env.emit({
        type: "analysis",
        phase: "folders",
        done: state.folderTotal,
        total: state.folderTotal,
        current: "no model: nothing to summarise",
        reused: false,
      });
      return { folderCursor: state.folderTotal };
    }
    if (state.folderCursor === 0 && (await step.unchanged()))
      return nothingToDo(env, "folders", state.folderTotal, {
        folderCursor: state.folderTotal,
        foldersReused: state.foldersReused + state.folderTotal,
      });
    // Subfolders must be finished first: the folders summarised in one step share a depth.
    const { end, work, reused } = await stepOf<string, FolderRecord>(
      manifest.folders,
      state.folderCursor,
      env.settings.concurrency,
      (folders) => records.folders(folders),
      (folder, r) => folderReusable(manifest, folder, r),
      (batch, folder) => depthOf(folder) === depthOf(batch[0]!),
    );
    let done = state.folderCursor;
    const progress = (folder: string, wasReused: boolean) =>
      env.emit({
        type: "analysis",
        phase: "folders",
        done: ++done,
        total: state.folderTotal,
        current: folder,
        reused: wasReused,
      });
    for (const i of reused) progress(manifest.folders[i]!, true);
    const index = work.length ? folderIndex(manifest.files, manifest.folders) : undefined;
    await Promise.all(
      work.map(async (i) => {
        const folder = manifest.folders[i]!;
        await foldFolder(manifest, records, folder, step.budgeted, index);
        progress(folder, false);
      }),
    );
    if (work.length) await records.bumpEpoch();
    return {
      folderCursor: end >= manifest.folders.length ? state.folderTotal : end,
      foldersAnalyzed: state.foldersAnalyzed + work.length,
      foldersReused: state.foldersReused + reused.length,
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
  index: FolderIndex = folderIndex(manifest.files, manifest.folders),
): Promise<"reused" | "analyzed" | "structural"> {
  if (!manifest.model) return "structural";
  const merkle = manifest.merkles[folder]!;
  if (folderReusable(manifest, folder, await records.folder(folder))) return "reused";
  const own = index.files.get(folder) ?? [];
  const units = await records.units(own);
  const files = own.map((f, i) => {
    const u = units[i];
    return `${f.path}: ${u?.finding ? `${u.finding.purpose} ${u.finding.summary}` : `(${f.lines} lines; no finding)`}`;
  });
  const subs = index.subfolders.get(folder) ?? [];
  const subRecords = await records.folders(subs);
  const subfolders = subs.map((d, i) => {
    const r = subRecords[i];
    return `${d}/: ${r?.summary ? `${r.summary.purpose} ${r.summary.summary}` : "(no summary)"}`;
  });
  const summary = await summarizeFolder(await budgeted(), folder, files, subfolders);
  await records.putFolder({
    path: folder,
    merkle,
    model: manifest.model,
    ...(summary ? { summary } : {}),
  });
  return "analyzed";
}
