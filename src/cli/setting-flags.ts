/**
 * The run settings' flags, derived from the settings table (run/setting-meta.ts): the flag, its
 * help and shown default, its choices or parser, all from the zod field and its entry. A command
 * adds the flags of its settings, and reads back only the settings a flag gave: what the user did
 * not pass stays out, so the environment, the settings files and the defaults apply beneath it.
 */
import path from "node:path";
import { InvalidArgumentError, Option, type Command } from "commander";
import { z } from "zod";
import {
  defaultOf,
  fromText,
  innerType,
  metaOf,
  type SettingCommand,
} from "../run/setting-meta.js";

interface Added {
  key: string;
  option: Option;
  paths: boolean;
}
const added = new WeakMap<Command, Added[]>();

/** Adds to `cmd` the flags of `schema`'s settings that `command` takes, in the schema's order. */
export function addSettingFlags(
  cmd: Command,
  command: SettingCommand,
  schema: z.ZodObject,
): Command {
  const list = added.get(cmd) ?? [];
  for (const key of Object.keys(schema.shape)) {
    const meta = metaOf(schema, key);
    if (!meta.flag || !meta.commands?.includes(command)) continue;
    const field = schema.shape[key] as z.ZodType;
    const help = meta.flagHelp ?? lowerFirst(field.description ?? key);
    const shown = shownDefault(defaultOf(schema, key), meta.env);
    // In the help text: commander shows a default's description only beside a default value, and a
    // flag's default would hide the environment's and the settings files' values beneath it.
    const option = new Option(meta.flag, shown ? `${help} (default: ${shown})` : help);
    const inner = innerType(field);
    // A path resolves against this folder: an empty one would grant it (path.resolve("")).
    const value = (f: z.ZodType, v: string) =>
      meta.paths ? parsed(f, nonEmptyPath(v)) : parsed(f, v);
    if (inner instanceof z.ZodEnum) option.choices(inner.options.map(String));
    else if (inner instanceof z.ZodArray)
      option.argParser((v: string, previous: unknown[] = []) => [
        ...previous,
        value(inner.element as z.ZodType, v),
      ]);
    else if (!(inner instanceof z.ZodBoolean)) option.argParser((v: string) => value(field, v));
    cmd.addOption(option);
    list.push({ key, option, paths: meta.paths === true });
  }
  added.set(cmd, list);
  return cmd;
}

/** The settings `cmd`'s table flags gave, paths resolved against the working directory. */
export function flagSettings(cmd: Command): Record<string, unknown> {
  const opts = cmd.opts();
  const out: Record<string, unknown> = {};
  for (const { key, option, paths } of added.get(cmd) ?? []) {
    const value = opts[option.attributeName()] as unknown;
    if (value === undefined) continue;
    out[key] = !paths
      ? value
      : Array.isArray(value)
        ? (value as string[]).map((p) => path.resolve(p))
        : path.resolve(value as string);
  }
  return out;
}

/**
 * The words that give `settings` again on a command line, each flag as its short form where it has
 * one (`-m qwen3:8b --approval plan --allow-read /data`): a secret and the run's own folder are left
 * out (the folder is the caller's to give).
 */
export function flagWords(schema: z.ZodObject, settings: Record<string, unknown>): string[] {
  const words: string[] = [];
  for (const key of Object.keys(schema.shape)) {
    const value = settings[key];
    const meta = metaOf(schema, key);
    if (value === undefined || !meta.flag || meta.secret || meta.trust === "folder") continue;
    const flag = /^-\w\b/.exec(meta.flag)?.[0] ?? /--[\w-]+/.exec(meta.flag)![0];
    if (typeof value === "boolean") {
      if (value) words.push(flag);
      continue;
    }
    for (const v of Array.isArray(value) ? (value as unknown[]) : [value])
      words.push(flag, typeof v === "string" ? v : JSON.stringify(v));
  }
  return words;
}

function nonEmptyPath(v: string): string {
  if (!v.trim()) throw new InvalidArgumentError("expected a path, not empty text");
  return v;
}

/** A flag's text as the field's value, or a usage error that says what the field takes. */
function parsed(field: z.ZodType, raw: string): unknown {
  const value = fromText(field, raw);
  const result = field.safeParse(value);
  if (result.success) return value;
  // Text fields with a rule of their own (a URL, not empty) say what it wants.
  const own = result.error.issues.find((i) => i.code === "custom" || i.code === "too_small");
  const inner = innerType(field);
  throw new InvalidArgumentError(
    own && !(inner instanceof z.ZodNumber) ? own.message : expected(inner),
  );
}

function expected(t: z.ZodType): string {
  if (!(t instanceof z.ZodNumber))
    return `expected ${t.def.type === "string" ? "text" : t.def.type}`;
  const { minValue: min, maxValue: max, isInt } = t;
  const bound = (n: number | null) =>
    n !== null && Number.isFinite(n) && Math.abs(n) < Number.MAX_SAFE_INTEGER;
  const range =
    bound(min) && bound(max)
      ? ` from ${min} to ${max}`
      : bound(min)
        ? ` ≥ ${min}`
        : bound(max)
          ? ` ≤ ${max}`
          : "";
  return `expected ${isInt ? "a whole number" : "a number"}${range}`;
}

/** What `--help` shows as the default: the variable that gives it, else the schema's default. */
function shownDefault(value: unknown, env: string | undefined): string | undefined {
  const plain =
    value === undefined || value === false || (Array.isArray(value) && value.length === 0)
      ? undefined
      : typeof value === "string"
        ? value
        : JSON.stringify(value);
  return [env && `$${env}`, plain].filter(Boolean).join(" or ") || undefined;
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
