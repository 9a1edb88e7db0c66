/**
 * The model server a command's settings resolve to (its flags, with the environment and the
 * settings files beneath them), and the check of those files. One definition for `keel run`,
 * `keel analyze`, `keel models`, `keel doctor` and `keel eval`; the flags themselves come from the
 * settings table (setting-flags.ts).
 */
import { ContextSchema } from "../coder/context.js";
import { AnalystContextSchema } from "../analyst/context.js";
import { noticeRefusals, runLayers } from "../run/layered.js";
import { foldLayers } from "../run/settings-layers.js";
import { ModelSettingsSchema, parseSettings } from "../run/settings.js";

/** The server the flags' settings, the environment and the settings files of `dir` name. */
export function resolvedServer(flags: Record<string, unknown>, dir = ".") {
  checkSettingsFiles(dir, flags);
  const s = parseSettings(ModelSettingsSchema, { context: { ...flags, workspace: dir } });
  return {
    provider: s.provider,
    url: s.serverUrl,
    model: s.model,
    ...(s.apiKey ? { apiKey: s.apiKey } : {}),
  };
}

/** Every setting a settings file may hold (the coder's and the analyst's). */
const KNOWN = new Set([
  ...Object.keys(ContextSchema.shape),
  ...Object.keys(AnalystContextSchema.shape),
]);

/**
 * Checks the settings files `dir`'s runs would read under the command's `flags`, with unknown
 * fields refused (a typo would otherwise be ignored), and says on stderr, once, each entry a
 * project's file may not set (the rest of it applies). Throws `SettingsFileError` naming the file
 * and the field.
 */
export function checkSettingsFiles(dir: string, flags: Record<string, unknown> = {}): void {
  for (const schema of [ContextSchema, AnalystContextSchema]) {
    const layers = runLayers(schema, { ...flags, workspace: dir }, { known: KNOWN });
    noticeRefusals(foldLayers(schema, layers).refused, (line) =>
      process.stderr.write(`keel: note: ${line}\n`),
    );
  }
}
