/**
 * edit_file: one replacement in a file the thread has read. The old text is found by the matching
 * cascade (edit-match.ts), which says in the result how it matched; an edit is refused when the
 * thread never read the file or the file changed since, and a model that keeps missing is pointed
 * at write_file with the whole content (diff-style edits fail far more often than whole files on
 * small models).
 */
import { z } from "zod";
import { applyEdit, describePlaces, STEP_LABEL, type EditOutcome } from "./edit-match.js";
import {
  contentHash,
  missingPath,
  notAFile,
  notRegular,
  PathArg,
  pathOf,
  readText,
  sandboxed,
  statOrNull,
  WHOLE_READ_MAX_BYTES,
} from "./fs-tools.js";
import { writeIn } from "../files/door.js";
import { defineTool, fail, ok, type ToolResult } from "./types.js";

/** Files up to this many lines are small enough to write whole. */
export const SMALL_FILE_LINES = 80;
/** Failed edits on one file after which the model is told to write it whole. */
export const EDIT_FAILURES_BEFORE_WRITE = 1;

export const editFileTool = defineTool({
  name: "edit_file",
  description:
    "Replace one occurrence of old_text with new_text in a file you have read (call read_file first). old_text must identify one place; include a few surrounding lines. For a small file, or a change to most of a file, use write_file with the full content instead.",
  toolClass: "mutate",
  schema: z.object({
    path: PathArg,
    old_text: z
      .string()
      .min(1)
      .describe("The text to replace, copied from the file, with enough lines to be unique"),
    new_text: z.string().describe("Replacement text"),
  }),
  touches: ({ path: p }, workspace) => pathOf(workspace, p),
  async run({ path: p, old_text, new_text }, ctx) {
    const r = sandboxed(ctx.workspace, p);
    if ("failure" in r) return r.failure;
    const st = await statOrNull(r.abs);
    if (!st) return missingPath("edit_file", r.rel);
    if (st.isDirectory()) return fail("wrong_tool", `edit_file: ${r.rel} is a directory.`);
    const what = notRegular(st);
    if (what) return notAFile("edit_file", r.rel, what);
    if (st.size > WHOLE_READ_MAX_BYTES)
      return fail(
        "refused",
        `edit_file: ${r.rel} is ${st.size} bytes, too large to edit here. Change it with run_command and a tool that streams it (sed).`,
      );
    const { text, notUtf8 } = await readText(r.abs);
    if (notUtf8)
      return fail(
        "refused",
        `edit_file: ${r.rel} is not UTF-8 text (${notUtf8}); an edit would write every byte that is not UTF-8 back as U+FFFD. Change it with run_command and a tool that keeps its encoding (sed, iconv), or replace it whole with write_file if that is meant.`,
      );
    const hash = contentHash(text);
    if (ctx.seen && !Object.hasOwn(ctx.seen, r.rel))
      return fail(
        "refused",
        `edit_file: ${r.rel} has not been read in this conversation. Call read_file on ${r.rel} first, then copy old_text from what it shows.`,
      );
    if (ctx.seen && ctx.seen[r.rel] !== hash)
      return fail(
        "refused",
        `edit_file: ${r.rel} changed on disk since it was last read (a command or a person changed it). Call read_file on ${r.rel} again, then edit what is there now.`,
      );
    const outcome = applyEdit(text, old_text, new_text);
    if (!outcome.ok) return failure(outcome, r.rel, text, ctx.failuresOnTarget ?? 0);
    await writeIn(ctx.workspace, r.rel, outcome.text);
    const where = describePlaces([outcome.place]);
    return {
      ...ok(`edited ${r.rel} at ${where}${outcome.note ? ` (${outcome.note})` : ""}`, [r.rel]),
      seen: { [r.rel]: contentHash(outcome.text) },
    };
  },
});

function failure(
  outcome: Exclude<EditOutcome, { ok: true }>,
  rel: string,
  text: string,
  failuresBefore: number,
): ToolResult {
  const lines = text.split("\n").length;
  const whole =
    failuresBefore >= EDIT_FAILURES_BEFORE_WRITE
      ? ` Editing ${rel} has failed before: call write_file with path "${rel}" and the complete new content instead.`
      : lines <= SMALL_FILE_LINES
        ? ` ${rel} is small (${lines} lines): write_file with its complete new content is simpler.`
        : "";
  switch (outcome.reason) {
    case "unchanged":
      return fail("failed", `edit_file: old_text and new_text are the same; nothing to change.`);
    case "ambiguous":
      return fail(
        "failed",
        `edit_file: old_text matches ${outcome.places.length} places in ${rel} (${describePlaces(outcome.places)}, matching ${STEP_LABEL[outcome.step]}). Include more surrounding lines in old_text so it matches one place.${whole}`,
      );
    case "not_found": {
      const near = outcome.closest
        ? ` The closest text is at ${describePlaces([outcome.closest])} (${Math.round(outcome.closest.likeness * 100)}% alike):\n${outcome.closest.text}\n`
        : " ";
      return fail(
        "failed",
        `edit_file: old_text was not found in ${rel}.${near}Copy old_text exactly from read_file's output.${whole}`,
      );
    }
  }
}
