import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { writeIn } from "../../files/door.js";
import type { GraphDeps } from "../../run/model.js";
import { synthesize } from "../analyze-unit.js";
import type { FolderRecord, UnitRecord } from "../records.js";
import { buildReport, renderMarkdown } from "../report.js";
import { analystStep } from "../runtime.js";
import type { AnalystStateUpdate, AnalystStateValue } from "../state.js";
import { folderGraph, hotspots } from "../structure.js";

/**
 * Writes the report (Markdown and JSON) from the stored records; with a model, first the
 * whole-codebase synthesis, reused when nothing below the root changed.
 */
export function createWriteReportNode(deps: GraphDeps) {
  return async (
    state: AnalystStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<AnalystStateUpdate> => {
    const { env, manifest, records, ...step } = await analystStep(config, deps, state);
    const units = new Map<string, UnitRecord>();
    for (const f of manifest.files) {
      const r = await records.unit(f.path);
      if (r) units.set(f.path, r);
    }
    const folders = new Map<string, FolderRecord>();
    for (const d of manifest.folders) {
      const r = await records.folder(d);
      if (r) folders.set(d, r);
    }
    let synthesis = undefined as Awaited<ReturnType<typeof synthesize>> | undefined;
    let reused = false;
    if (manifest.model) {
      const root = manifest.merkles["."] ?? "";
      const stored = await records.report();
      if (stored?.merkle === root && stored.model === manifest.model) {
        synthesis = stored.synthesis;
        reused = true;
      } else {
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
        synthesis = await synthesize(await step.budgeted(), lines, graph, hotLines);
        if (synthesis) await records.putReport({ merkle: root, model: manifest.model, synthesis });
      }
    }
    env.emit({ type: "analysis", phase: "report", done: 1, total: 1, current: "report", reused });
    const report = buildReport(
      manifest,
      env.settings.depth,
      units,
      folders,
      synthesis ?? undefined,
    );
    const md = path.resolve(env.settings.out ?? path.join(state.target, ".keel", "report.md"));
    const json = md.replace(/\.md$/i, "") + ".json";
    await writeReport(state.target, md, renderMarkdown(report));
    await writeReport(state.target, json, `${JSON.stringify(report, null, 2)}\n`);
    return {
      reportPath: md,
      jsonPath: json,
      largestRequest: step.largest(),
      summary: `${report.totals.files} files analysed${manifest.model ? ` with ${manifest.model}` : " without a model (structural report)"}; report at ${md}`,
    };
  };
}

/**
 * Writes a report file through keel's file door (`files/door.ts`): in the analysed folder (the
 * default `.keel/report.md`) no link is followed on the way or at the file — a repository's
 * `.keel/report.md` linked to a shell start-up file is refused, not written through; elsewhere (an
 * `--out` the person gave) the folders are the person's, the file itself is still not a link.
 */
async function writeReport(target: string, file: string, text: string): Promise<void> {
  const rel = path.relative(target, file);
  if (rel && !rel.startsWith("..") && !path.isAbsolute(rel))
    return writeIn(target, rel, text, { makeParents: true });
  await mkdir(path.dirname(file), { recursive: true });
  return writeIn(path.dirname(file), path.basename(file), text);
}
