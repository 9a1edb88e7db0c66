/**
 * A file change a tool call makes (write_file's content, edit_file's replacement): what it writes,
 * the setting that runs code it would add to a project config, and what a person is shown of it
 * before approving it (the gate, tool-gate.ts).
 */
import path from "node:path";
import { printable } from "../../printable.js";
import { protectedSetting, settingRulesOf } from "../../sandbox/protected-settings.js";
import type { ProtectedPath } from "../../sandbox/protected.js";
import { lstatOf, readInSync } from "../../files/door.js";
import { applyEdit } from "../../tools/edit-match.js";
import type { KeelTool } from "../../tools/types.js";

/** What a file change writes: write_file's content, or edit_file's replacement. */
export type FileChange = { content: string } | { oldText: string; newText: string };

/** A call's file change, if it is one. */
export function fileChangeOf(tool: KeelTool, args: unknown): FileChange | undefined {
  const a = (args ?? {}) as Record<string, unknown>;
  if (tool.name === "edit_file")
    return typeof a.old_text === "string" && typeof a.new_text === "string"
      ? { oldText: a.old_text, newText: a.new_text }
      : undefined;
  return typeof a.content === "string" ? { content: a.content } : undefined;
}

/** The text a change leaves in a file holding `before` ("" when missing), as edit_file would. */
function textAfter(change: FileChange, before: string): string {
  if ("content" in change) return change.content;
  const edited = applyEdit(before, change.oldText, change.newText);
  return edited.ok ? edited.text : before; // an edit that fails writes nothing
}

/** A setting the change adds to a project config that a tool runs code from (`protectedSetting`). */
export function settingAdded(
  workspace: string,
  rel: string,
  change: FileChange | undefined,
): ProtectedPath[] {
  // the file as it is is read only for the few files that take such settings
  if (change === undefined || settingRulesOf(rel).length === 0) return [];
  let before: string | undefined;
  try {
    before = readInSync(workspace, rel)?.toString("utf8");
  } catch {
    before = undefined; // a link, a FIFO, one too large: asked below
  }
  // one there that keel cannot read (too large, not a regular file) is not written past a person
  if (before === undefined && lstatOf(path.join(workspace, rel)))
    return [
      {
        path: rel,
        why: "its tools may run the commands or plugins it names, and keel cannot read this one (too large, or not a regular file) to check which",
      },
    ];
  const added = protectedSetting(rel, before ?? "", textAfter(change, before ?? ""));
  return added ? [added] : [];
}

/**
 * What a person is shown of a file change before approving it: the content, or the edit, whole (a
 * part shown is a part approved: what follows it would be written unseen), its control characters
 * visible (`printable`: a carriage return or an escape sequence could hide a line).
 */
export function changePreview(tool: KeelTool, args: unknown): string {
  const a = (args ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => printable(typeof v === "string" ? v : JSON.stringify(v));
  if (tool.name === "edit_file") return `replace:\n${text(a.old_text)}\nwith:\n${text(a.new_text)}`;
  if ("content" in a) return `content:\n${text(a.content)}`;
  return printable(JSON.stringify(a));
}

/** The longest change a person is asked to read in full before approving it (characters). */
export const PREVIEW_MAX = 20_000;
