/**
 * What travels on the queue: one job per unit, keyed by the unit's path and content hash (and the
 * model and depth that analyse it), so a re-run enqueues only what changed. A job is data a peer
 * of the queue could have written: it is checked field by field, names no path a worker reads, and
 * a worker uses it only when its text is the text of the run's manifest (worker.ts). Pure.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { ANALYSIS_DEPTHS, type AnalysisDepth } from "../analyst/analyze-unit.js";
import { isInsidePath } from "../analyst/manifest.js";

/** The pg-boss queue keel's unit jobs live in; the suffix is the job format's version. */
export const UNIT_QUEUE = "keel-analyze-units-v2";
/** The version of `UnitJob`: a worker refuses jobs of another. */
export const JOB_FORMAT = 2;
/** The pg-boss schema version this keel was built with (pg-boss 10.x). */
export const QUEUE_SCHEMA = 24;
/** Attempts of a unit before it is reported as failed (pg-boss retries = attempts - 1). */
export const UNIT_ATTEMPTS = 3;

const UnitJobSchema = z.object({
  v: z.literal(JOB_FORMAT),
  /** The analysis thread: the run's manifest is in the store under it. */
  run: z.string().min(1).max(200),
  /** The analysis (one listing of the target, the manifest's id) the unit belongs to. */
  analysis: z.string().min(1).max(100),
  unit: z.object({
    path: z.string().refine(isInsidePath, "not a path inside the analysed folder"),
    hash: z.string().regex(/^[0-9a-f]{40}$/),
    bytes: z.number().int().min(0),
    lines: z.number().int().min(0),
    language: z.string().max(64),
  }),
  model: z.string().min(1).max(200),
  depth: z.enum(ANALYSIS_DEPTHS),
  text: z.string(),
});

/** One unit to analyse, with its text, so a worker on any machine needs only the database. */
export type UnitJob = z.output<typeof UnitJobSchema>;

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

export const sha1 = (s: string | Buffer) => createHash("sha1").update(s).digest("hex");

/**
 * The singleton key of a unit's job: the codebase, the path, the content hash, the model and the
 * depth. While a job with this key is queued or running, sending it again is a no-op.
 */
export function unitJobKey(
  target: string,
  j: { unit: { path: string; hash: string }; model: string; depth: AnalysisDepth },
): string {
  return `${sha1(target).slice(0, 12)}:${j.unit.path}:${j.unit.hash}:${j.model}:${j.depth}`;
}

/** A job the queue holds that keel will not work on, with the reason (it fails at once, no retry). */
export class BadJobError extends Error {
  override name = "BadJobError";
}

/** Checks a job's data before any work: a job from another keel version, or bad data, is refused. */
export function checkUnitJob(data: unknown): UnitJob {
  const v = (data as { v?: unknown } | null)?.v;
  if (v !== JOB_FORMAT)
    throw new BadJobError(
      `a unit job of format ${String(v)} is on the queue; this keel reads format ${JOB_FORMAT}: run workers of the same keel version as the coordinator`,
    );
  const j = UnitJobSchema.safeParse(data);
  if (!j.success) {
    const issue = j.error.issues[0];
    throw new BadJobError(
      `a unit job with bad data (${issue?.path.join(".") || "job"}: ${issue?.message}): refused`,
    );
  }
  return j.data;
}
