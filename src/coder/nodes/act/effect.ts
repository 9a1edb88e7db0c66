/**
 * Whether the run produced what its request asked to change, before act lets a final answer end
 * it `done` (coder/requested-effect.ts reads the request).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { changesThings } from "../../../tools/registry.js";
import { UNRUN } from "../../../guard/ladder.js";
import { commandCalls, commandOk, ranCommand, unapproved } from "../../call-tally.js";
import { requestedEffect, unwritten } from "../../requested-effect.js";
import type { CoderStateValue } from "../../state.js";
import { asksToRun } from "../intent-classify/rules.js";

/**
 * What the request asked for and the run has not done, as a sentence for the failure's detail, or
 * undefined when nothing is missing. A named file counts as written when write_file or edit_file
 * wrote it this run, or when a command ran this run and the file is on disk (`cp`, a generator);
 * a request for "a file" without a name is met by any write. A request that asks for something to
 * be run is met by a command that ran (whatever its exit code).
 */
export function unmetEffect(
  state: Pick<CoderStateValue, "request" | "filesWritten" | "callTally" | "intent">,
  where: { workspace: string; interactive: boolean },
): { detail: string; final?: true } | undefined {
  const unwritten = unwrittenEffect(state, where.workspace);
  return unwritten ? { detail: unwritten } : unrunCommand(state, where.interactive);
}

/**
 * A request that asks for something to be run ("… and run it"), in a run offered run_command,
 * where no command ran: every one was refused (a shell redirection, a rule) or none was tried. A
 * command that needed a person's approval is not the model's to get round: where a person was
 * asked and said no, the run may end without it (their decision); where none could be asked, the
 * run is not done, and no hint can change that (`final`: it ends at once, with a report).
 */
export function unrunCommand(
  state: Pick<CoderStateValue, "request" | "callTally" | "intent">,
  interactive: boolean,
): { detail: string; final?: true } | undefined {
  if (!state.intent || !changesThings(state.intent.intent)) return undefined;
  if (!asksToRun(state.request) || ranCommand(state.callTally)) return undefined;
  const waited = unapproved(state.callTally);
  if (waited && interactive) return undefined;
  if (waited)
    return {
      detail: `${UNRUN}: run_command needs a person's approval and no one was there to give it (run keel in a terminal, or with --yes)`,
      final: true,
    };
  const tried = commandCalls(state.callTally);
  return {
    detail: `${UNRUN}${tried ? ` (${tried === 1 ? "the run_command call was" : `all ${tried} run_command calls were`} refused)` : ""}`,
  };
}

function unwrittenEffect(
  state: Pick<CoderStateValue, "request" | "filesWritten" | "callTally">,
  workspace: string,
): string | undefined {
  const effect = requestedEffect(state.request);
  if (!effect.writes) return undefined;
  const ran = commandOk(state.callTally);
  const missing = unwritten(effect.paths, state.filesWritten).filter(
    (p) => !(ran && existsSync(path.resolve(workspace, p))),
  );
  if (missing.length > 0)
    return `the request asks for ${missing.join(", ")} to be written, and ${missing.length > 1 ? "they were" : "it was"} not`;
  if (effect.paths.length === 0 && state.filesWritten.length === 0 && !ran)
    return "the request asks for the result to be written to a file, and no file was written";
  return undefined;
}
