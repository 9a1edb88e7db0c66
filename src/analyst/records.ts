/**
 * The analyst's durable records in a LangGraph store, outside the message history and the graph
 * state: per-file findings keyed by path and the hash of the text analysed (so a re-run reuses
 * whatever did not change, and a finding of other text can never stand in for a file's), folder
 * summaries keyed by path with the hash of everything below, the report synthesis keyed by the
 * root's hash, what the last listing saw of each file (size and times), and each run's manifest.
 */
import { createHash, randomUUID } from "node:crypto";
import type { BaseStore } from "@langchain/langgraph";
import type { FileUnit, StatIndex } from "./enumerate.js";
import type { LastRun } from "./last-run.js";
import { checkManifest, ManifestError, type Manifest } from "./manifest.js";
export type { Manifest } from "./manifest.js";
import type { FolderSummary, ReportSynthesis, UnitFinding } from "./schema.js";
import type { UnitFacts } from "./structure.js";

export interface UnitRecord {
  path: string;
  /** sha1 of the text this record was made from: part of its key. */
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

const sha = (s: string) => createHash("sha1").update(s).digest("hex");

/** The namespace of a codebase's records: stable across runs and threads. */
export const findingsNs = (target: string) => ["keel", "findings", sha(target).slice(0, 16)];
const runNs = (threadId: string) => ["keel", "analysis-runs", threadId];

/** The key of a unit's record: the hash comes first (fixed length), so no path can forge another's. */
export const unitKey = (path: string, hash: string) => `unit:${hash}:${path}`;

const dirOf = (p: string) => {
  const i = p.lastIndexOf("/");
  return i < 0 ? "." : p.slice(0, i);
};

/** What each folder holds directly: its files and its subfolders (one pass over the manifest). */
export interface FolderIndex {
  files: Map<string, FileUnit[]>;
  subfolders: Map<string, string[]>;
}

export function folderIndex(files: FileUnit[], folders: string[]): FolderIndex {
  const index: FolderIndex = { files: new Map(), subfolders: new Map() };
  const add = <T>(m: Map<string, T[]>, k: string, v: T) => {
    const list = m.get(k);
    if (list) list.push(v);
    else m.set(k, [v]);
  };
  for (const f of files) add(index.files, dirOf(f.path), f);
  for (const d of folders) if (d !== ".") add(index.subfolders, dirOf(d), d);
  return index;
}

/**
 * A folder's hash covers every file and folder below it: one change re-summarises its ancestors
 * only. `folders` deepest first (as enumeration lists them), so a subfolder's hash is there first.
 */
export function merkles(files: FileUnit[], folders: string[]): Record<string, string> {
  const index = folderIndex(files, folders);
  const out: Record<string, string> = {};
  for (const folder of folders) {
    const parts: string[] = [];
    for (const f of index.files.get(folder) ?? []) parts.push(`f:${f.path}:${f.hash}`);
    for (const sub of index.subfolders.get(folder) ?? []) parts.push(`d:${sub}:${out[sub]}`);
    out[folder] = sha(parts.sort().join("\n"));
  }
  return out;
}

export class AnalysisRecords {
  constructor(
    private readonly store: BaseStore,
    private readonly target: string,
  ) {}

  private get ns() {
    return findingsNs(this.target);
  }

  /**
   * Values of many keys of this codebase, a thousand at a time: asked together, they go to the
   * store as one batch (a graph's store batches the requests of one tick; so does keel's).
   */
  private async many<T>(keys: string[]): Promise<Array<T | undefined>> {
    const out: Array<T | undefined> = [];
    for (let i = 0; i < keys.length; i += 1000) {
      const items = await Promise.all(
        keys.slice(i, i + 1000).map((key) => this.store.get(this.ns, key)),
      );
      for (const item of items) out.push((item?.value as T | undefined) ?? undefined);
    }
    return out;
  }

  /** The record made from the text whose sha1 is `hash`, if any. */
  async unit(path: string, hash: string): Promise<UnitRecord | undefined> {
    return (await this.many<UnitRecord>([unitKey(path, hash)]))[0];
  }
  /** The records of these files as they are now (one batch). */
  units(files: Array<Pick<FileUnit, "path" | "hash">>): Promise<Array<UnitRecord | undefined>> {
    return this.many(files.map((f) => unitKey(f.path, f.hash)));
  }
  async putUnit(r: UnitRecord): Promise<void> {
    await this.store.put(this.ns, unitKey(r.path, r.hash), r);
  }
  /** Removes the records of file versions that are gone (a changed or removed file's old text). */
  async dropUnits(files: Array<Pick<FileUnit, "path" | "hash">>): Promise<void> {
    for (let i = 0; i < files.length; i += 1000)
      await Promise.all(
        files.slice(i, i + 1000).map((f) => this.store.delete(this.ns, unitKey(f.path, f.hash))),
      );
  }
  async folder(path: string): Promise<FolderRecord | undefined> {
    return (await this.many<FolderRecord>([`dir:${path}`]))[0];
  }
  folders(paths: string[]): Promise<Array<FolderRecord | undefined>> {
    return this.many(paths.map((p) => `dir:${p}`));
  }
  async putFolder(r: FolderRecord): Promise<void> {
    await this.store.put(this.ns, `dir:${r.path}`, r);
  }
  async report(): Promise<ReportRecord | undefined> {
    return (await this.many<ReportRecord>(["report"]))[0];
  }
  async putReport(r: ReportRecord): Promise<void> {
    await this.store.put(this.ns, "report", r);
  }
  /** The records' epoch: replaced by every step that writes records (last-run.ts). */
  async epoch(): Promise<string> {
    return (await this.many<{ id: string }>(["records-epoch"]))[0]?.id ?? "";
  }
  async bumpEpoch(): Promise<void> {
    await this.store.put(this.ns, "records-epoch", { id: randomUUID() });
  }
  /** What the last complete run's report was made of (last-run.ts). */
  async lastRun(): Promise<LastRun | undefined> {
    return (await this.many<LastRun>(["last-run"]))[0];
  }
  async putLastRun(r: LastRun): Promise<void> {
    await this.store.put(this.ns, "last-run", r);
  }
  /** What the last listing of this codebase saw of each file; undefined before the first. */
  async statIndex(): Promise<StatIndex | undefined> {
    return (await this.many<StatIndex>(["stat-index"]))[0];
  }
  async putStatIndex(index: StatIndex): Promise<void> {
    await this.store.put(this.ns, "stat-index", index);
  }

  /**
   * A run's manifest, checked entry by entry: whoever can write the store could have put a path
   * outside the target or a malformed entry there; those are left out and named in `refused`.
   * Given `target` (the folder the person asked for), a manifest of another folder is refused.
   */
  static async manifest(store: BaseStore, threadId: string, target?: string): Promise<Manifest> {
    const item = await store.get(runNs(threadId), "manifest");
    if (!item)
      throw new ManifestError(
        `no manifest for analysis thread ${threadId}: the enumerate step has not run`,
      );
    return checkManifest(item.value, threadId, target);
  }
  static async putManifest(store: BaseStore, threadId: string, m: Manifest): Promise<void> {
    await store.put(runNs(threadId), "manifest", m);
  }
}
