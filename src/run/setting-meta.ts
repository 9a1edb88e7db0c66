/**
 * The table of settings: each run setting is one zod field (type, default, help text) registered
 * here with where else it may come from (its flag and the commands that take it, its environment
 * variable) and who may give it (its `trust`). The CLI's flags and `--help`, the environment
 * reader, the settings' layering and its refusals, Studio's form and docs/settings.md are all
 * derived from the schemas and this registry; adding a setting is one field with its entry.
 */
import { z } from "zod";

/**
 * Who gives a value: the person (their flags, environment, own settings file, and code that calls
 * keel), a project's settings file (`<workspace>/.keel/settings.json`, written by whoever ships the
 * repository), or an API caller (a run's context sent to the LangGraph server).
 */
export type SettingSource = "person" | "project" | "api";
/** The sources keel does not take at their word. */
export type UntrustedSource = Exclude<SettingSource, "person">;

/**
 * What a value from an untrusted source does: `set` it (over the layers beneath), `lower` it (a
 * number only below the person's own), `add` to the person's list, or `refuse` it (named once).
 */
export type Take = "set" | "lower" | "add" | "refuse";

/**
 * Who may give a setting besides the person, who may give every one. One decision per entry.
 */
export const TRUST = {
  /** Harmless: the model's name, sampling, how tools are shown; anyone may set it. */
  anyone: { project: "set", api: "set" },
  /**
   * Where the person's data, keys or trust go (the server, its URL, a key, a program or folder
   * outside the workspace), or a guard loosened (sandbox, approval, grants, timeouts, limits).
   */
  person: { project: "refuse", api: "refuse" },
  /** A budget: others may lower it, never raise it. */
  lower: { project: "lower", api: "lower" },
  /** Rules that ask or refuse more: others add to the person's. */
  added: { project: "add", api: "add" },
  /** The run's own folder: the command or the API caller names it, never a settings file. */
  folder: { project: "refuse", api: "set" },
} as const satisfies Record<string, Record<UntrustedSource, Take>>;
export type Trust = keyof typeof TRUST;

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
  /** Who may give it besides the person (`TRUST`): every entry decides. */
  trust: Trust;
  /** The flag's values are paths, resolved against the working directory. */
  paths?: boolean;
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

/**
 * The entry of `schema`'s field `key`; a field with none (or no such field) is the person's alone,
 * so a setting nobody decided on is never taken from a project's file or an API caller.
 */
export function metaOf(schema: z.ZodObject, key: string): SettingMeta {
  const field = schema.shape[key] as z.ZodType | undefined;
  return (field && settingTable.get(field)) ?? { trust: "person" };
}

/** What a value of `schema`'s `key` from `source` does (`Take`). */
export function takeOf(schema: z.ZodObject, key: string, source: UntrustedSource): Take {
  return TRUST[metaOf(schema, key).trust][source];
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
