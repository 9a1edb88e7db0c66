/**
 * docs/settings.md's table of every run setting, written from the schemas and the settings table
 * (`npm run docs:settings`); a test fails when the file and the table disagree.
 */
import type { z } from "zod";
import { defaultOf, innerType, metaOf } from "./setting-meta.js";

/** Where the generated table sits in docs/settings.md. */
export const DOC_MARKERS = ["<!-- settings table: npm run docs:settings -->", "<!-- end -->"];

/** One schema's settings as a Markdown table. */
export function settingsTable(schema: z.ZodObject): string {
  const rows = Object.keys(schema.shape).map((key) => {
    const field = schema.shape[key] as z.ZodType;
    const meta = metaOf(schema, key);
    const d = defaultOf(schema, key);
    const sources = [
      meta.flag ? `\`${meta.flag.replace(/^-\w, /, "")}\` (${meta.commands?.join(", ")})` : "",
      meta.env ? `\`${meta.env}\`` : "",
      meta.location
        ? "the command's folder"
        : meta.userOnly
          ? "user file"
          : meta.additive
            ? "files (added)"
            : "files",
    ].filter(Boolean);
    return [
      `\`${key}\``,
      innerType(field).def.type,
      d === undefined ? "" : `\`${JSON.stringify(d)}\``,
      sources.join("; "),
      (field.description ?? "").replaceAll("|", "\\|"),
    ];
  });
  return [
    "| setting | type | default | from (besides code and Studio) | what it does |",
    "|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

/** `doc` with its generated part replaced by `tables` (each a heading and a table). */
export function withTables(doc: string, tables: Array<[string, z.ZodObject]>): string {
  const [open, close] = DOC_MARKERS as [string, string];
  const start = doc.indexOf(open);
  const end = doc.indexOf(close, start);
  const body = tables.map(([title, schema]) => `### ${title}\n\n${settingsTable(schema)}`);
  const block = `${open}\n\n${body.join("\n\n")}\n\n${close}`;
  return start < 0 || end < 0
    ? `${doc.trimEnd()}\n\n## Every setting\n\n${block}\n`
    : `${doc.slice(0, start)}${block}${doc.slice(end + close.length)}`;
}
