/**
 * Where a run's settings come from, as a list of layers in order, and the one place they are
 * folded (`layered`): defaults < the model's calibration profile < the user's settings file < the
 * project's settings file < the environment < the run's own (flags, code, or an API caller's
 * context). Which entries a project's file or an API caller may set is the settings table's
 * (`trust`, setting-meta.ts); a project's refused entries are named once and the rest of its file
 * applies; an API caller's refused entries stop its run with an error that names them.
 */
import path from "node:path";
import type { z } from "zod";
import { readEnv, variable } from "../env.js";
import { fromText, metaOf } from "./setting-meta.js";
import { fileLayer, PROJECT_SETTINGS, SettingsFileError } from "./settings-file.js";
import { foldLayers, type Refusal, type SettingsLayer } from "./settings-layers.js";

/** Who gave a run's own values: the person (flags, code) or an API caller (a run's context). */
export type Caller = "person" | "api";

/** Reads one layer beneath a run's own values (`given`); undefined when it has nothing. */
type LayerReader = (
  schema: z.ZodObject,
  given: Record<string, unknown>,
  opts: { caller: Caller; known?: ReadonlySet<string> },
) => SettingsLayer | undefined;

/** Every layer keel reads beneath a run's own values, by name. */
export const LAYER_READERS = {
  "user-file": (schema, given, { known }) =>
    fileLayer(schema, settingsFiles(given).user, "person", known),
  "project-file": (schema, given, { known }) =>
    fileLayer(schema, settingsFiles(given).project, "project", known),
  // the person's variables, beneath what the person gave for the run (an API caller's context
  // does not hide them: what it may not set falls back to them)
  environment: (schema, given, { caller }) => ({
    source: "person",
    name: "environment",
    values: envDefaults(schema, caller === "person" ? given : {}),
  }),
} satisfies Record<string, LayerReader>;
export type LayerName = keyof typeof LAYER_READERS;

/** The layers a run reads by default, lowest first. */
export const LAYERS: readonly LayerName[] = ["user-file", "project-file", "environment"];

export interface LayerOptions {
  /** Who gave the run's own values (default: the person). */
  caller?: Caller;
  /** The layers read beneath them, lowest first (default `LAYERS`; a worker reads no project's). */
  layers?: readonly LayerName[];
  /** Every setting a file may name: any other is an error (a typo would be ignored otherwise). */
  known?: ReadonlySet<string>;
  /**
   * The model's calibration profile's settings (run/profile-use.ts), the lowest layer: the
   * person's (keel calibrate wrote it in their state folder, for the server and model their own
   * settings chose), beneath every other; its objects merge beneath what a layer above gives.
   */
  profile?: Record<string, unknown>;
}

/** A run's layers, lowest first: `opts.layers` read for `schema`, then the run's own `given`. */
export function runLayers(
  schema: z.ZodObject,
  given: Record<string, unknown>,
  opts: LayerOptions = {},
): SettingsLayer[] {
  const caller = opts.caller ?? "person";
  const read = { caller, ...(opts.known ? { known: opts.known } : {}) };
  const beneath = (opts.layers ?? LAYERS).map((name) => LAYER_READERS[name](schema, given, read));
  const own: SettingsLayer = {
    source: caller,
    name: caller === "api" ? "the run's context (an API caller)" : "the run's own settings",
    values: given,
  };
  const profile: SettingsLayer | undefined = opts.profile && {
    source: "person",
    name: "the model's calibration profile",
    values: opts.profile,
    mergesBeneath: true,
  };
  return [profile, ...beneath, own].filter((l): l is SettingsLayer => l !== undefined);
}

/**
 * A run's settings before the schema's defaults: its layers folded (`foldLayers`). A project's
 * refused entries are noticed once (`noticeRefusals`); an API caller's are a `SettingsFileError`
 * naming each. Throws `SettingsFileError` for a bad file or variable.
 */
export function layered(
  schema: z.ZodObject,
  given: Record<string, unknown>,
  opts: LayerOptions = {},
): Record<string, unknown> {
  const { values, refused } = foldLayers(schema, runLayers(schema, given, opts));
  const theirs = refused.filter((r) => r.layer.source === "api");
  if (theirs.length) {
    const byWhy = new Map<string, string[]>();
    for (const r of theirs) byWhy.set(r.why, [...(byWhy.get(r.why) ?? []), `"${r.key}"`]);
    const said = [...byWhy].map(([why, keys]) => `${keys.join(", ")}: ${why}`);
    const name = theirs[0]!.layer.name;
    throw new SettingsFileError(name, undefined, `refused ${said.join("; ")}`, name);
  }
  noticeRefusals(refused);
  // a /v1 root the person gave for this run, with no provider named anywhere, is an
  // OpenAI-compatible server's: `--base-url` alone must not be ignored for the default, Ollama
  const person = (opts.caller ?? "person") === "person";
  if (person && given.baseUrl !== undefined && values.provider === undefined)
    if ("provider" in schema.shape) values.provider = "openai";
  return values;
}

/** The notices said already: each refused entry of a file is named once per process. */
const noticed = new Set<string>();

/** The line that names a refused entry, its file, and that the rest of the file applies. */
export const refusalLine = (r: Refusal) =>
  `${r.layer.name}, field "${r.key}": refused — ${r.why}; the rest of the file applies`;

/**
 * Says each refusal once per process (the same file's entry with the same value is not said
 * again, however many times the run's settings are read): by `say`, else as a process warning
 * (`KeelSettingsWarning`), which Node prints on stderr.
 */
export function noticeRefusals(
  refused: readonly Refusal[],
  say: (line: string) => void = (line) => process.emitWarning(line, "KeelSettingsWarning"),
): void {
  for (const r of refused) {
    const line = refusalLine(r);
    const id = `${line}\0${JSON.stringify(r.layer.values[r.key])}`;
    if (noticed.has(id)) continue;
    noticed.add(id);
    say(line);
  }
}

/**
 * The settings files of a run: the user's, and the project's in the run's workspace (the coder's
 * `workspace`, the analyst's `target`, else the working directory).
 */
export function settingsFiles(given: Record<string, unknown>): { user: string; project: string } {
  const dir =
    [given.workspace, given.target].find((v): v is string => typeof v === "string") ?? ".";
  return {
    user: readEnv().userSettingsFile,
    project: path.join(path.resolve(dir), PROJECT_SETTINGS),
  };
}

/**
 * Settings the environment supplies where a run does not say: each field's variable in the
 * settings table (`KEEL_MODEL`, `OLLAMA_HOST`, `KEEL_PROVIDER`, `KEEL_BASE_URL`,
 * `OPENAI_API_KEY`), for the fields the run does not give (`given`); a value the field refuses is
 * a `SettingsFileError` naming the variable. The same for every entry point — the CLI, Studio and
 * the LangGraph server, `runAgent` and `runAnalysis`.
 */
export function envDefaults(
  schema: z.ZodObject,
  given: Record<string, unknown> = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(schema.shape)) {
    if (given[key] !== undefined) continue; // the run's own value wins; its variable is not read
    const meta = metaOf(schema, key);
    const raw = meta.env ? variable(meta.env) : undefined;
    if (raw === undefined) continue;
    const field = schema.shape[key] as z.ZodType;
    let value: unknown = raw;
    try {
      value = meta.fromEnv ? meta.fromEnv(raw) : fromText(field, raw);
    } catch {
      // left as written: the check below names the variable and what it takes
    }
    const checked = field.safeParse(value);
    if (!checked.success)
      throw new SettingsFileError(
        meta.env!,
        key,
        checked.error.issues.map((i) => i.message).join("; "),
        `environment variable ${meta.env}`,
      );
    out[key] = value;
  }
  return out;
}
