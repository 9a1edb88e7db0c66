/**
 * What travels on the queue: one job per unit, keyed by the unit's path and content hash (and the
 * model and depth that analyse it), so a re-run enqueues only what changed. Pure.
 */
import { createHash } from "node:crypto";
import type { AnalysisDepth } from "../analysis/analyze-unit.js";
import type { FileUnit } from "../analysis/enumerate.js";

/** The pg-boss queue keel's unit jobs live in; the suffix is the job format's version. */
export const UNIT_QUEUE = "keel-analyze-units-v1";
/** The version of `UnitJob`: a worker refuses jobs of another. */
export const JOB_FORMAT = 1;
/** The pg-boss schema version this keel was built with (pg-boss 10.x). */
export const QUEUE_SCHEMA = 24;
/** Attempts of a unit before it is reported as failed (pg-boss retries = attempts - 1). */
export const UNIT_ATTEMPTS = 3;

/** One unit to analyse, with its text, so a worker on any machine needs only the database. */
export interface UnitJob {
  v: typeof JOB_FORMAT;
  /** The analysis thread (the run) the unit belongs to; its manifest is in the store. */
  run: string;
  /** Absolute path of the analysed folder on the coordinator: the findings' namespace. */
  target: string;
  unit: FileUnit;
  model: string;
  depth: AnalysisDepth;
  text: string;
}

/** What a worker leaves on a completed or failed job (pg-boss keeps it as the job's output). */
export interface UnitOutcome {
  worker: string;
  server?: string;
  /** "analyzed": a finding or a failed-schema record written; "duplicate": it was already there. */
  result?: "analyzed" | "duplicate";
  /** false: the model's answers did not match the finding schema (the record says so). */
  finding?: boolean;
  /** Time from taking the job to the finding written, ms. */
  ms?: number;
  /** Of that, the time in the unit analysis itself (the model calls), ms. */
  modelMs?: number;
  error?: string;
}

const sha = (s: string) => createHash("sha1").update(s).digest("hex");

/**
 * The singleton key of a unit's job: the codebase, the path, the content hash, the model and the
 * depth. While a job with this key is queued or running, sending it again is a no-op.
 */
export function unitJobKey(j: Pick<UnitJob, "target" | "unit" | "model" | "depth">): string {
  return `${sha(j.target).slice(0, 12)}:${j.unit.path}:${j.unit.hash}:${j.model}:${j.depth}`;
}

/** Checks a job's data before any work: a job from another keel version is refused, clearly. */
export function checkUnitJob(data: unknown): UnitJob {
  const j = data as Partial<UnitJob> | null;
  if (!j || typeof j !== "object" || j.v !== JOB_FORMAT)
    throw new Error(
      `a unit job of format ${String(j?.v)} is on the queue; this keel reads format ${JOB_FORMAT}: run workers of the same keel version as the coordinator`,
    );
  if (!j.unit?.path || typeof j.text !== "string" || !j.run || !j.target || !j.model)
    throw new Error(
      "a unit job without unit, text, run, target or model: the queue holds bad data",
    );
  return j as UnitJob;
}
