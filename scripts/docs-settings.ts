/**
 * `npm run docs:settings`: writes docs/settings.md's table of every run setting from the schemas
 * and the settings table. test/unit/settings-table.test.ts fails when the file is out of date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { z } from "zod";
import { ContextSchema } from "../src/agent/context.js";
import { AnalystContextSchema } from "../src/analysis/context.js";
import { withTables } from "../src/run/settings-doc.js";

export const SETTINGS_DOC = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "docs",
  "settings.md",
);

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
