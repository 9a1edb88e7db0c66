/**
 * A worker's settings for one job: its own flags, over its own environment, over the person's own
 * settings file, resolved again for every job and kept for nothing else. Never a project's
 * settings file, and never a path a job names: a job is data any peer of the queue could have
 * written, and a worker is no part of the analysed codebase (it may not even have its files).
 */
import { analystRunConfig, type AnalystSettingsInput } from "../analyst/context.js";
import type { LayerName } from "../run/layered.js";

/** What a worker's settings are read from beneath its flags: never a project's file. */
export const WORKER_LAYERS: readonly LayerName[] = ["user-file", "environment"];

/** The settings a worker takes from its flags: everything but where the model is and which it is. */
export type WorkerFlags = Omit<
  AnalystSettingsInput,
  "target" | "model" | "ollamaUrl" | "baseUrl" | "provider"
>;

/** The model, server and depth of one job's unit, as the worker decided them. */
export interface JobModel {
  model: string;
  depth: "quick" | "deep";
  provider: "ollama" | "openai";
  url: string;
}

/**
 * The run config of one job's unit analysis: `flags` over the environment over the person's
 * settings file over the model's calibration profile on that server (`profile`), with the job's
 * model, server and depth. Throws `SettingsFileError` for a bad file.
 */
export function jobConfig(
  run: string,
  flags: WorkerFlags,
  job: JobModel,
  profile?: Record<string, unknown>,
) {
  const given: AnalystSettingsInput = {
    ...flags,
    model: job.model,
    depth: job.depth,
    provider: job.provider,
    ...(job.provider === "openai" ? { baseUrl: job.url } : { ollamaUrl: job.url }),
  };
  // resolved again for this job: the context object is kept with it only
  return analystRunConfig(run, given, WORKER_LAYERS, profile);
}
