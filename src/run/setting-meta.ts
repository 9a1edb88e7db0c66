/**
 * The table of settings: each run setting is one zod field (type, default, help text) registered
 * here with where else it may come from (its flag and the commands that take it, its environment
 * variable, whether a project's file may set it). The CLI's flags and `--help`, the environment
 * reader, the settings files' checks, Studio's form and docs/settings.md are all derived from the
 * schemas and this registry; adding a setting is one field with its entry.
 */
import { z } from "zod";

/** The commands whose flags come from the table. */
export const SETTING_COMMANDS = ["run", "analyze", "models", "doctor", "eval", "worker"] as const;
export type SettingCommand = (typeof SETTING_COMMANDS)[number];

export interface SettingMeta {
  /** The flag, in commander's spelling: `--max-turns <n>`, `-m, --model <name>`, `-y, --yes`. */
  flag?: string;
  /** The commands that take the flag. */
  commands?: readonly SettingCommand[];
  /** The flag's help where it should say more (or less) than the field's description. */
  flagHelp?: string;
  /** The environment variable that gives the setting where the run does not. */
  env?: string;
  /** Turns the variable's text into the setting's value (default: as text, else JSON). */
  fromEnv?: (raw: string) => unknown;
  /** Only the user's own file may set it: a project's file must not widen what the agent may do. */
  userOnly?: boolean;
  /** A list a project's file adds to the user's instead of replacing it. */
  additive?: boolean;
  /** The flag's values are paths, resolved against the working directory. */
  paths?: boolean;
  /**
   * The run's own folder (the coder's workspace, the analyst's target): given by the command or
   * the caller, never by a settings file, which is read from that folder.
   */
  location?: boolean;
  /** A value other than the default, for the table's own test and the docs' examples. */
  example?: unknown;
  /** Never repeated in a command keel prints (the resume hint): a password, a key. */
  secret?: boolean;
}

/** Where the settings' entries are registered (one per zod field). */
export const settingTable = z.registry<SettingMeta>();

/** Registers `field` as a setting with `meta`; returns the same field. */
export function setting<T extends z.ZodType>(field: T, meta: SettingMeta): T {
  settingTable.add(field, meta);
  return field;
}

/** The entry of `schema`'s field `key` (an empty one for a field with none, or no such field). */
export function metaOf(schema: z.ZodObject, key: string): SettingMeta {
  const field = schema.shape[key] as z.ZodType | undefined;
  return (field && settingTable.get(field)) ?? {};
}

/** The keys of `schema` whose entries say `test`. */
export const keysWhere = (schema: z.ZodObject, test: (m: SettingMeta) => boolean): string[] =>
  Object.keys(schema.shape).filter((k) => test(metaOf(schema, k)));

/** A field without its default and optional wrappers: the type a value must have. */
export function innerType(field: z.ZodType): z.ZodType {
  let t: z.ZodType = field;
  while (t instanceof z.ZodDefault || t instanceof z.ZodPrefault || t instanceof z.ZodOptional)
    t = t.unwrap() as z.ZodType;
  return t;
}

/**
 * A setting's value from text (a flag's or an environment variable's): the text itself where the
 * field takes text, else its JSON (numbers, booleans, lists, objects), else the text (for the
 * field's own error).
 */
export function fromText(field: z.ZodType, raw: string): unknown {
  if (field.safeParse(raw).success) return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** The default of `schema`'s field `key`, as the schema declares it. */
export const defaultOf = (schema: z.ZodObject, key: string): unknown =>
  (schema.shape[key] as z.ZodType).safeParse(undefined).data;
