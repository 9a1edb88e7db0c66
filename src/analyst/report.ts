/**
 * The analysis report, as JSON (for machines) and Markdown (for people). Pure: built from the
 * manifest and the stored records only, so an interrupted-and-resumed run writes the same report
 * as an uninterrupted one.
 */
import { printableName } from "../printable.js";
import path from "node:path";
import { REPORT_MARK } from "./enumerate.js";
import type { FolderRecord, Manifest, UnitRecord } from "./records.js";
import type { ReportSynthesis } from "./schema.js";
import { folderGraph, hotspots, type Hotspots, type UnitFacts } from "./structure.js";

export interface AnalysisReport {
  generator: typeof REPORT_MARK;
  name: string;
  model: string | null;
  depth: string;
  noModelReason?: string;
  totals: {
    files: number;
    lines: number;
    bytes: number;
    languages: Record<string, { files: number; lines: number }>;
  };
  skipped: Manifest["skipped"];
  /** Entries of the run's stored manifest keel refused (a path out of the target, a malformed entry). */
  refused?: string[];
  synthesis?: ReportSynthesis;
  folders: Array<{
    path: string;
    files: number;
    lines: number;
    purpose?: string;
    summary?: string;
  }>;
  units: Array<{
    path: string;
    language: string;
    lines: number;
    purpose?: string;
    summary?: string;
    keySymbols?: string[];
    dependencies?: string[];
    risks?: string[];
    internalImports: string[];
    symbols: number;
    todos: number;
    failed?: string;
  }>;
  importGraph: Array<{ from: string; to: string; imports: number }>;
  hotspots: Hotspots;
}

export function buildReport(
  m: Manifest,
  depth: string,
  units: Map<string, UnitRecord>,
  folders: Map<string, FolderRecord>,
  synthesis?: ReportSynthesis,
): AnalysisReport {
  const facts = new Map<string, UnitFacts>([...units].map(([p, r]) => [p, r.facts]));
  const languages: AnalysisReport["totals"]["languages"] = {};
  for (const f of m.files) {
    const l = (languages[f.language] ??= { files: 0, lines: 0 });
    l.files++;
    l.lines += f.lines;
  }
  // files and lines under each folder, in one pass: each file counts in every folder above it
  const under = new Map<string, { files: number; lines: number }>();
  for (const f of m.files)
    for (let d = f.path; d !== ".";) {
      d = path.posix.dirname(d);
      const t = under.get(d) ?? { files: 0, lines: 0 };
      t.files++;
      t.lines += f.lines;
      under.set(d, t);
    }
  return {
    generator: REPORT_MARK,
    name: path.basename(m.target),
    model: m.model,
    depth,
    ...(m.noModelReason ? { noModelReason: m.noModelReason } : {}),
    totals: {
      files: m.files.length,
      lines: m.files.reduce((a, f) => a + f.lines, 0),
      bytes: m.files.reduce((a, f) => a + f.bytes, 0),
      languages,
    },
    skipped: m.skipped,
    ...(m.refused?.length ? { refused: m.refused } : {}),
    ...(synthesis ? { synthesis } : {}),
    folders: [...m.folders].sort().map((d) => {
      const s = folders.get(d)?.summary;
      return {
        path: d,
        files: under.get(d)?.files ?? 0,
        lines: under.get(d)?.lines ?? 0,
        ...(s ? { purpose: s.purpose, summary: s.summary } : {}),
      };
    }),
    units: m.files.map((f) => {
      const r = units.get(f.path);
      const fi = r?.finding;
      return {
        path: f.path,
        language: f.language,
        lines: f.lines,
        ...(fi
          ? {
              purpose: fi.purpose,
              summary: fi.summary,
              keySymbols: fi.keySymbols,
              dependencies: fi.dependencies,
              risks: fi.risks,
            }
          : {}),
        internalImports: r?.facts.internal ?? [],
        symbols: r?.facts.symbols.length ?? 0,
        todos: r?.facts.todos ?? 0,
        ...(r?.failed ? { failed: r.failed } : {}),
      };
    }),
    importGraph: folderGraph(facts),
    hotspots: hotspots(m.files, facts),
  };
}

const list = (xs: string[] | undefined) =>
  xs?.length ? xs.map((x) => `- ${x}`).join("\n") : "- (none)";

export function renderMarkdown(r: AnalysisReport): string {
  return [
    ...headLines(r),
    ...(r.synthesis ? synthesisLines(r.synthesis) : []),
    ...structureLines(r),
    ...fileLines(r),
  ].join("\n");
}

/** The report's title, what made it, its totals and what was skipped or refused. */
function headLines(r: AnalysisReport): string[] {
  const out: string[] = [
    `<!-- ${REPORT_MARK}: written by keel analyze -->`,
    `# Analysis of ${r.name}`,
    "",
  ];
  if (r.model)
    out.push(
      `Model: \`${r.model}\` (${r.depth} depth). Findings per file, summaries per folder and the synthesis come from the model; structure, imports and hotspots are parsed.`,
    );
  else
    out.push(
      `> **No model was used.** ${r.noModelReason ?? ""}`.trim(),
      "> This is the structural report: files, languages, imports and symbols parsed with tree-sitter, the import graph between folders, sizes and hotspots. Run with a model for findings and summaries.",
    );
  out.push(
    "",
    `${r.totals.files} files, ${r.totals.lines} lines: ${Object.entries(r.totals.languages)
      .sort((a, b) => b[1].lines - a[1].lines)
      .map(([l, v]) => `${l} ${v.files} files / ${v.lines} lines`)
      .join(", ")}.`,
  );
  const skipped = Object.entries(r.skipped).filter(([, n]) => n > 0);
  if (skipped.length)
    out.push(`Skipped: ${skipped.map(([k, n]) => `${n} ${k.replace("_", " ")}`).join(", ")}.`);
  if (r.refused?.length)
    out.push(
      "",
      `> **The run's manifest in the store held ${r.refused.length} entries keel refused** (never read nor sent): ${r.refused.slice(0, 20).map(printableName).join("; ")}${r.refused.length > 20 ? "; …" : ""}`,
    );
  return out;
}

/** The model's synthesis: overview, architecture, main flows, hotspots and risks. */
function synthesisLines(s: NonNullable<AnalysisReport["synthesis"]>): string[] {
  return [
    "",
    "## Overview",
    "",
    s.summary,
    "",
    "## Architecture",
    "",
    s.architecture,
    "",
    "## Main flows",
    "",
    list(s.mainFlows),
    "",
    "## Hotspots",
    "",
    list(s.hotspots),
    "",
    "## Risks",
    "",
    list(s.risks),
  ];
}

/** What was parsed: the structural hotspots, the imports between folders, the folders. */
function structureLines(r: AnalysisReport): string[] {
  const out: string[] = [];
  const h = r.hotspots;
  out.push("", "## Structural hotspots", "");
  out.push(
    `Largest files: ${h.largest.map((x) => `\`${printableName(x.path)}\` (${x.lines})`).join(", ") || "none"}`,
  );
  out.push(
    `Most imported: ${h.mostImported.map((x) => `\`${printableName(x.path)}\` (${x.importedBy})`).join(", ") || "none"}`,
  );
  out.push(
    `Most symbols: ${h.mostSymbols.map((x) => `\`${printableName(x.path)}\` (${x.symbols})`).join(", ") || "none"}`,
  );
  out.push(
    `Most TODO/FIXME: ${h.mostTodos.map((x) => `\`${printableName(x.path)}\` (${x.todos})`).join(", ") || "none"}`,
  );
  out.push("", "## Imports between folders", "");
  out.push(
    r.importGraph.length
      ? r.importGraph
          .slice(0, 40)
          .map((e) => `- \`${e.from}\` → \`${e.to}\` (${e.imports})`)
          .join("\n")
      : "- (no imports between folders)",
  );
  out.push("", "## Folders", "", "| folder | files | lines | purpose |", "|---|---|---|---|");
  for (const f of r.folders)
    out.push(
      `| \`${printableName(f.path)}\` | ${f.files} | ${f.lines} | ${(f.purpose ?? "").replace(/\|/g, "\\|")} |`,
    );
  return out;
}

/** Each file: its language and sizes, what it imports, and the model's finding on it. */
function fileLines(r: AnalysisReport): string[] {
  const out: string[] = [];
  out.push("", "## Files", "");
  for (const u of r.units) {
    out.push(
      `### \`${printableName(u.path)}\``,
      "",
      `${u.language}, ${u.lines} lines, ${u.symbols} symbols${u.todos ? `, ${u.todos} TODO/FIXME` : ""}${u.internalImports.length ? `; imports ${u.internalImports.map((p) => `\`${p}\``).join(", ")}` : ""}.`,
    );
    if (u.purpose) out.push("", `**${u.purpose}** ${u.summary ?? ""}`);
    if (u.risks?.length) out.push("", `Risks:\n${list(u.risks)}`);
    if (u.failed) out.push("", `_The model's finding could not be used: ${u.failed}._`);
    out.push("");
  }
  return out;
}
