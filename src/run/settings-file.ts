/**
 * Settings files: the project's `<workspace>/.keel/settings.json` and the user's
 * `$XDG_CONFIG_HOME/keel/settings.json` (default `~/.config/keel/settings.json`). Precedence, high to
 * low: flags (the run's own settings) > environment > project file > user file > defaults.
 *
 * A project's file travels with the repository, so it cannot widen what the agent may do on the
 * machine, nor choose where prompts and keys are sent (the settings table's `userOnly` entries:
 * the sandbox's grants, running unsandboxed, approving everything, MCP servers, the server's URL);
 * those belong in the user's file. A project's list of ask or
 * deny rules adds to the user's (`additive`): a repository may ask or refuse more, never less. A
 * bad file is an error that names the file and the field.
 */
import { lstatSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { readInSync } from "../files/door.js";
import { keysWhere, metaOf } from "./setting-meta.js";

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
 * otherwise be ignored silently); a project file may not set `userOnly` fields.
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
    if (metaOf(schema, key).location)
      throw new SettingsFileError(
        file,
        key,
        "the run's folder is given by the command (-w, or the folder to analyse), not by a settings file",
      );
    if (opts.project && metaOf(schema, key).userOnly) {
      throw new SettingsFileError(
        file,
        key,
        `only your user settings file may set it (a project's file must not widen what the agent may do on your machine, nor choose where your prompts and keys are sent)`,
      );
    }
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

/** The settings the two files give for `schema` (project over user); throws `SettingsFileError`. */
export function fileSettings(
  schema: z.ZodObject,
  files: { user: string; project: string },
  known?: ReadonlySet<string>,
): Record<string, unknown> {
  const user = cachedFile(files.user, false);
  const project = cachedFile(files.project, true);
  const mine = user
    ? checkSettings(files.user, user, schema, { project: false, ...(known ? { known } : {}) })
    : {};
  const theirs = project
    ? checkSettings(files.project, project, schema, { project: true, ...(known ? { known } : {}) })
    : {};
  const merged = { ...mine, ...theirs };
  for (const key of keysWhere(schema, (m) => m.additive === true))
    if (Array.isArray(mine[key]) && Array.isArray(theirs[key]))
      merged[key] = [...(mine[key] as unknown[]), ...(theirs[key] as unknown[])];
  return merged;
}
