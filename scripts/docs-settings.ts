/**
 * `npm run docs:settings`: writes docs/settings.md's table of every run setting from the schemas
 * and the settings table (src/run/setting-meta.ts). test/unit/run/setting-meta.test.ts fails when
 * the file is out of date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { z } from "zod";
import { ContextSchema } from "../src/coder/context.js";
import { AnalystContextSchema } from "../src/analyst/context.js";
import {
  defaultOf,
  innerType,
  metaOf,
  TRUST,
  type SettingMeta,
  type Take,
} from "../src/run/setting-meta.js";

export const SETTINGS_DOC = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "docs",
  "settings.md",
);

/** Where the generated table sits in docs/settings.md. */
const DOC_MARKERS = ["<!-- settings table: npm run docs:settings -->", "<!-- end -->"];

/** What a value from an untrusted source does, in the table's words. */
const TAKES: Record<Take, string> = {
  set: "sets it",
  lower: "may lower it",
  add: "adds to yours",
  refuse: "refused",
};

/** What a project's file and an API caller may do with the setting (its `trust`). */
function others(meta: SettingMeta): string {
  const { project, api } = TRUST[meta.trust];
  return project === api ? TAKES[project] : `file: ${TAKES[project]}; API: ${TAKES[api]}`;
}

/** One schema's settings as a Markdown table. */
function settingsTable(schema: z.ZodObject): string {
  const rows = Object.keys(schema.shape).map((key) => {
    const field = schema.shape[key] as z.ZodType;
    const meta = metaOf(schema, key);
    const d = defaultOf(schema, key);
    const yours = [
      meta.flag ? `\`${meta.flag.replace(/^-\w, /, "")}\` (${meta.commands?.join(", ")})` : "",
      meta.env ? `\`${meta.env}\`` : "",
      meta.trust === "folder" ? "the command's folder" : "user file",
    ].filter(Boolean);
    return [
      `\`${key}\``,
      innerType(field).def.type,
      d === undefined ? "" : `\`${JSON.stringify(d)}\``,
      yours.join("; "),
      others(meta),
      (field.description ?? "").replaceAll("|", "\\|"),
    ];
  });
  return [
    "| setting | type | default | from you (besides code) | a project's file, an API caller | what it does |",
    "|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

/** `doc` with its generated part replaced by `tables` (each a heading and a table). */
function withTables(doc: string, tables: Array<[string, z.ZodObject]>): string {
  const [open, close] = DOC_MARKERS as [string, string];
  const start = doc.indexOf(open);
  const end = doc.indexOf(close, start);
  const body = tables.map(([title, schema]) => `### ${title}\n\n${settingsTable(schema)}`);
  const block = `${open}\n\n${body.join("\n\n")}\n\n${close}`;
  return start < 0 || end < 0
    ? `${doc.trimEnd()}\n\n## Every setting\n\n${block}\n`
    : `${doc.slice(0, start)}${block}${doc.slice(end + close.length)}`;
}

/** The analyst's settings that are not the coder's own fields. */
const analystOwn = z.object(
  Object.fromEntries(
    Object.entries(AnalystContextSchema.shape).filter(
      ([k, f]) => (ContextSchema.shape as Record<string, unknown>)[k] !== f,
    ),
  ),
);

/** docs/settings.md as the table says it should be, formatted as `npm run format` would. */
export async function settingsDoc(current: string): Promise<string> {
  const doc = withTables(current, [
    ["keel run, runAgent, the coder graph", ContextSchema],
    ["keel analyze, runAnalysis, the analyst graph (besides the model settings above)", analystOwn],
  ]);
  return format(doc, { ...(await resolveConfig(SETTINGS_DOC)), filepath: SETTINGS_DOC });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SETTINGS_DOC, await settingsDoc(readFileSync(SETTINGS_DOC, "utf8")));
  process.stdout.write(`wrote ${SETTINGS_DOC}\n`);
}
