/**
 * Settings files: the project's `<workspace>/.keel/settings.json` and the user's
 * `$XDG_CONFIG_HOME/keel/settings.json` (default `~/.config/keel/settings.json`), each read as one
 * layer of a run's settings (layered.ts). The user's file is the person's own; a project's travels
 * with the repository, so what it may set is the settings table's decision (`trust`), applied when
 * the layers are folded (settings-layers.ts). A bad file is an error that names the file and the
 * field.
 */
import { lstatSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { readInSync } from "../files/door.js";
import { metaOf } from "./setting-meta.js";
import type { SettingsLayer } from "./settings-layers.js";

/** The project's settings file, relative to the workspace. */
export const PROJECT_SETTINGS = ".keel/settings.json";

/** A settings file that cannot be used, named with the field at fault. */
export class SettingsFileError extends Error {
  override name = "SettingsFileError";
  constructor(
    readonly file: string,
    readonly field: string | undefined,
    detail: string,
    /** What gave the value: a settings file, or (for `envDefaults`) an environment variable. */
    source = `settings file ${file}`,
  ) {
    super(`${source}${field ? `, field "${field}"` : ""}: ${detail}`);
  }
}

/**
 * A file's JSON object; undefined when there is no file. A project's file is read through keel's
 * file door (`files/door.ts`): a link on the way or at the file, a FIFO or a device is an error,
 * never followed or waited on.
 */
export function readSettingsFile(
  file: string,
  opts: { project?: boolean } = {},
): Record<string, unknown> | undefined {
  let text: string;
  try {
    const bytes = opts.project
      ? readInSync(path.resolve(file, "..", ".."), PROJECT_SETTINGS)
      : readFileSync(file);
    if (bytes === undefined) return undefined;
    text = bytes.toString("utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new SettingsFileError(file, undefined, (e as Error).message);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new SettingsFileError(file, undefined, `not valid JSON: ${(e as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new SettingsFileError(file, undefined, "must be a JSON object of settings");
  return value as Record<string, unknown>;
}

/**
 * One file's settings checked against `schema`: each field it knows is validated (the error names
 * the file and the field); with `known`, a field no schema knows is an error (a typo would
 * otherwise be ignored silently); the person's own file may not name the run's folder (a
 * project's is refused it with the rest of its person-only entries, when the layers are folded).
 */
export function checkSettings(
  file: string,
  values: Record<string, unknown>,
  schema: z.ZodObject,
  opts: { project: boolean; known?: ReadonlySet<string> },
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (key === "$schema") continue;
    if (!opts.project && metaOf(schema, key).trust === "folder")
      throw new SettingsFileError(
        file,
        key,
        "the run's folder is given by the command (-w, or the folder to analyse), not by a settings file",
      );
    const field = schema.shape[key] as z.ZodType | undefined;
    if (!field) {
      if (opts.known && !opts.known.has(key))
        throw new SettingsFileError(
          file,
          key,
          `unknown setting (known: ${[...opts.known].sort().join(", ")})`,
        );
      continue;
    }
    const parsed = field.safeParse(value);
    if (!parsed.success)
      throw new SettingsFileError(file, key, parsed.error.issues.map((i) => i.message).join("; "));
    out[key] = value;
  }
  return out;
}

interface Cached {
  mtimeMs: number;
  values: Record<string, unknown> | undefined;
}
const cache = new Map<string, Cached>();

/** A file's settings, read again only when it changed on disk. */
function cachedFile(file: string, project: boolean): Record<string, unknown> | undefined {
  let mtimeMs = -1;
  try {
    // the project's own entry (a link is not followed: its read is refused), the user's through links
    mtimeMs = (project ? lstatSync(file) : statSync(file)).mtimeMs;
  } catch {
    // no file
  }
  const hit = cache.get(file);
  if (hit && hit.mtimeMs === mtimeMs) return hit.values;
  const values = mtimeMs < 0 ? undefined : readSettingsFile(file, { project });
  cache.set(file, { mtimeMs, values });
  return values;
}

/**
 * The layer a settings file gives for `schema`: the person's own (`source` "person") or a
 * project's; none when there is no file. Throws `SettingsFileError` for a bad file.
 */
export function fileLayer(
  schema: z.ZodObject,
  file: string,
  source: "person" | "project",
  known?: ReadonlySet<string>,
): SettingsLayer | undefined {
  const project = source === "project";
  const values = cachedFile(file, project);
  if (!values) return undefined;
  return {
    source,
    name: `settings file ${file}`,
    values: checkSettings(file, values, schema, { project, ...(known ? { known } : {}) }),
  };
}
