import { mkdir } from "node:fs/promises";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { writeIn } from "../../files/door.js";
import type { GraphDeps } from "../../run/model.js";
import { synthesize, type Budgeted } from "../analyze-unit.js";
import { reportDoor, reportHash, reportsThere } from "../last-run.js";
import type {
  AnalysisRecords,
  FolderRecord,
  Manifest,
  ReportRecord,
  UnitRecord,
} from "../records.js";
import { buildReport, renderMarkdown } from "../report.js";
import { analystStep } from "../runtime.js";
import type { AnalystStateUpdate, AnalystStateValue } from "../state.js";
import { folderGraph, hotspots } from "../structure.js";

/**
 * Writes the report (Markdown and JSON) from the stored records; with a model, first the
 * whole-codebase synthesis, reused when nothing below the root changed. When nothing the report
 * is made of changed since the last run and its files are still the ones written then, they are
 * left as they are, and no record is read.
 */
export function createWriteReportNode(deps: GraphDeps) {
  return async (
    state: AnalystStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<AnalystStateUpdate> => {
    const { env, manifest, records, reports, ...step } = await analystStep(config, deps, state);
    const summary = `${manifest.files.length} files analysed${manifest.model ? ` with ${manifest.model}` : " without a model (structural report)"}; report at ${reports.md}`;
    const done = { reportPath: reports.md, jsonPath: reports.json, summary };
    const last = await step.unchanged();
    if (last && (await reportsThere(last, state.target, reports))) {
      env.emit({
        type: "analysis",
        phase: "report",
        done: 1,
        total: 1,
        current: "report",
        reused: true,
      });
      return { ...done, largestRequest: step.largest() };
    }
    const units = new Map<string, UnitRecord>();
    (await records.units(manifest.files)).forEach((r, i) => {
      if (r) units.set(manifest.files[i]!.path, r);
    });
    const folders = new Map<string, FolderRecord>();
    (await records.folders(manifest.folders)).forEach((r, i) => {
      if (r) folders.set(manifest.folders[i]!, r);
    });
    const { synthesis, reused } = manifest.model
      ? await synthesisOf(manifest, manifest.model, records, units, folders, step.budgeted)
      : { synthesis: undefined, reused: false };
    env.emit({ type: "analysis", phase: "report", done: 1, total: 1, current: "report", reused });
    const report = buildReport(manifest, env.settings.depth, units, folders, synthesis);
    const md = renderMarkdown(report);
    const json = `${JSON.stringify(report, null, 2)}\n`;
    await writeReport(state.target, reports.md, md);
    await writeReport(state.target, reports.json, json);
    await records.putLastRun({
      fingerprint: await step.fingerprint(),
      failed: state.failed,
      md: reportHash(md),
      json: reportHash(json),
    });
    return { ...done, largestRequest: step.largest() };
  };
}

/** The whole-codebase synthesis: the stored one when nothing below the root changed, else asked. */
async function synthesisOf(
  manifest: Manifest,
  model: string,
  records: AnalysisRecords,
  units: Map<string, UnitRecord>,
  folders: Map<string, FolderRecord>,
  budgeted: () => Promise<Budgeted>,
): Promise<{ synthesis: ReportRecord["synthesis"] | undefined; reused: boolean }> {
  const root = manifest.merkles["."] ?? "";
  const stored = await records.report();
  if (stored?.merkle === root && stored.model === model)
    return { synthesis: stored.synthesis, reused: true };
  const facts = new Map([...units].map(([p, r]) => [p, r.facts]));
  const lines = [...manifest.folders].sort().map((d) => {
    const s = folders.get(d)?.summary;
    return `${d}/: ${s ? `${s.purpose} ${s.summary}` : "(no summary)"}`;
  });
  const graph = folderGraph(facts).map((e) => `${e.from} -> ${e.to} (${e.imports})`);
  const hot = hotspots(manifest.files, facts);
  const hotLines = [
    ...hot.largest.map((x) => `large: ${x.path} (${x.lines} lines)`),
    ...hot.mostImported.map((x) => `imported by ${x.importedBy} files: ${x.path}`),
  ];
  const synthesis = await synthesize(await budgeted(), lines, graph, hotLines);
  if (synthesis) await records.putReport({ merkle: root, model, synthesis });
  return { synthesis: synthesis ?? undefined, reused: false };
}

/**
 * Writes a report file through keel's file door (`files/door.ts`): in the analysed folder (the
 * default `.keel/report.md`) no link is followed on the way or at the file — a repository's
 * `.keel/report.md` linked to a shell start-up file is refused, not written through; elsewhere (an
 * `--out` the person gave) the folders are the person's, the file itself is still not a link.
 */
async function writeReport(target: string, file: string, text: string): Promise<void> {
  const { root, rel } = reportDoor(target, file);
  if (root === target) return writeIn(root, rel, text, { makeParents: true });
  await mkdir(root, { recursive: true });
  return writeIn(root, rel, text);
}
