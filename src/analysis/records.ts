/**
 * The analyst's durable records in a LangGraph store, outside the message history and the graph
 * state: per-file findings and folder summaries keyed by path and content hash (so a re-run reuses
 * whatever did not change), the report synthesis keyed by the root's hash, and each run's manifest.
 */
import { createHash } from "node:crypto";
import type { BaseStore } from "@langchain/langgraph";
import type { Enumeration, FileUnit } from "./enumerate.js";
import type { FolderSummary, ReportSynthesis, UnitFinding } from "./schema.js";
import type { UnitFacts } from "./structure.js";

export interface UnitRecord {
  path: string;
  hash: string;
  facts: UnitFacts;
  /** Model, depth and finding; absent in a run without a model. */
  model?: string;
  depth?: string;
  finding?: UnitFinding;
  /** Why the model's answer could not be used. */
  failed?: string;
}

export interface FolderRecord {
  path: string;
  merkle: string;
  model?: string;
  summary?: FolderSummary;
}

export interface ReportRecord {
  merkle: string;
  model: string;
  synthesis: ReportSynthesis;
}

export interface Manifest extends Enumeration {
  target: string;
  merkles: Record<string, string>;
  /** The model used, or null when the run has none. */
  model: string | null;
  noModelReason?: string;
}

const sha = (s: string) => createHash("sha1").update(s).digest("hex");

/** The namespace of a codebase's records: stable across runs and threads. */
export const findingsNs = (target: string) => ["keel", "findings", sha(target).slice(0, 16)];
const runNs = (threadId: string) => ["keel", "analysis-runs", threadId];

/** A folder's hash covers every file and folder below it: one change re-summarises its ancestors only. */
export function merkles(files: FileUnit[], folders: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const folder of folders) {
    const parts: string[] = [];
    for (const f of files) if (dirOf(f.path) === folder) parts.push(`f:${f.path}:${f.hash}`);
    for (const sub of folders)
      if (sub !== folder && dirOf(sub) === folder) parts.push(`d:${sub}:${out[sub]}`);
    out[folder] = sha(parts.sort().join("\n"));
  }
  return out;
}

const dirOf = (p: string) => {
  const i = p.lastIndexOf("/");
  return i < 0 ? "." : p.slice(0, i);
};

export class AnalysisRecords {
  constructor(
    private readonly store: BaseStore,
    private readonly target: string,
  ) {}

  async unit(path: string): Promise<UnitRecord | undefined> {
    return (await this.store.get(findingsNs(this.target), `file:${path}`))?.value as
      UnitRecord | undefined;
  }
  async putUnit(r: UnitRecord): Promise<void> {
    await this.store.put(findingsNs(this.target), `file:${r.path}`, r);
  }
  async folder(path: string): Promise<FolderRecord | undefined> {
    return (await this.store.get(findingsNs(this.target), `dir:${path}`))?.value as
      FolderRecord | undefined;
  }
  async putFolder(r: FolderRecord): Promise<void> {
    await this.store.put(findingsNs(this.target), `dir:${r.path}`, r);
  }
  async report(): Promise<ReportRecord | undefined> {
    return (await this.store.get(findingsNs(this.target), "report"))?.value as
      ReportRecord | undefined;
  }
  async putReport(r: ReportRecord): Promise<void> {
    await this.store.put(findingsNs(this.target), "report", r);
  }

  static async manifest(store: BaseStore, threadId: string): Promise<Manifest> {
    const item = await store.get(runNs(threadId), "manifest");
    if (!item)
      throw new Error(
        `no manifest for analysis thread ${threadId}: the enumerate step has not run`,
      );
    return item.value as Manifest;
  }
  static async putManifest(store: BaseStore, threadId: string, m: Manifest): Promise<void> {
    await store.put(runNs(threadId), "manifest", m);
  }
}
