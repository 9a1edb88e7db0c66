/**
 * Project instructions: the workspace's `AGENTS.md` (or, where there is none, `CLAUDE.md` or
 * `GEMINI.md`), read once when a request starts and kept in the thread's state, so every turn of the
 * run — and a resumed run — sends the same system prompt (the server's KV cache keeps its prefix).
 */
import { readIn } from "../files/door.js";
import { CHARS_PER_TOKEN } from "../guard/context-budget.js";

/** The files read, first found wins. */
export const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md", "GEMINI.md"];

/** The largest instructions file read (a larger one is passed over, as one that is not there). */
export const MAX_INSTRUCTIONS_BYTES = 1 << 20;

/** Most of the window project instructions may take. */
export const INSTRUCTIONS_SHARE = 0.15;

/**
 * The instructions as the system prompt carries them, capped; "" when the workspace has none. Each
 * file is read through keel's file door (`files/door.ts`): one that is a link (a command could make
 * one to a secret, or to a FIFO that would hang every later run), not a regular file, or larger than
 * `MAX_INSTRUCTIONS_BYTES` is passed over for the next name. With the workspace's top-level
 * `listing`, a name it lacks (in any case) is not looked for.
 */
export async function readInstructions(
  workspace: string,
  window: number,
  listing?: readonly string[],
): Promise<string> {
  const listed = listing && new Set(listing.map((n) => n.toLowerCase()));
  for (const name of INSTRUCTION_FILES) {
    if (listed && !listed.has(name.toLowerCase())) continue;
    const bytes = await readIn(workspace, name, { maxBytes: MAX_INSTRUCTIONS_BYTES }).catch(
      () => undefined,
    );
    if (bytes === undefined) continue;
    const text = bytes.toString("utf8");
    return instructionsBlock(name, text, Math.floor(window * INSTRUCTIONS_SHARE * CHARS_PER_TOKEN));
  }
  return "";
}

/** The prompt section for one file's text, cut at `maxChars` on a line boundary with a note. */
export function instructionsBlock(file: string, text: string, maxChars: number): string {
  let body = text.trim();
  if (!body) return "";
  if (body.length > maxChars) {
    const cut = body.lastIndexOf("\n", maxChars);
    body = `${body.slice(0, cut > maxChars / 2 ? cut : maxChars)}\n[... ${file} cut here: ${text.length} characters in all; read the file for the rest]`;
  }
  return `<project_instructions file="${file}">\n${body}\n</project_instructions>`;
}
