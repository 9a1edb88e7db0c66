/**
 * The recovery ladder: what `recover` does at each strike of a failure kind. Pure.
 * hint → re-plan → ask a human (interactive) or end with an honest report.
 */
export type FailureKind = "tool_error" | "loop" | "empty" | "prose" | "unparseable" | "budget";

export type RecoveryAction = "hint" | "replan" | "ask" | "end";

/**
 * Decides the action for the n-th strike (1-based) of a kind. Loops already got their hint inside
 * the tool result at the first hit, so a loop reaching `recover` is its second hit: it ends (or
 * asks). A spent budget always ends.
 */
export function decideRecovery(
  kind: FailureKind,
  strike: number,
  interactive: boolean,
): RecoveryAction {
  const last: RecoveryAction = interactive ? "ask" : "end";
  if (kind === "budget") return "end";
  if (kind === "loop") return last;
  if (strike <= 1) return "hint";
  if (strike === 2) return "replan";
  return last;
}

const EMPTY_NUDGES = [
  "Your last reply was empty. Continue the task: call a tool, or give your final answer as text.",
  "Your reply was empty again. You must either call one of the tools now or write your final answer. An empty reply ends the run.",
];

/** The message injected into the model's context for a hint. */
export function hintFor(kind: FailureKind, strike: number, detail: string): string {
  switch (kind) {
    case "empty":
      return EMPTY_NUDGES[Math.min(strike, EMPTY_NUDGES.length) - 1]!;
    case "prose":
      return "You described what to do but did not do it: no file was written and no command was run. Do it now with the tools: call write_file with the path and the full content of each file (or edit_file / run_command). Do not answer in prose.";
    case "unparseable":
      return `Your last message tried to call a tool, but the call could not be read: ${detail}`;
    case "tool_error":
      return `Your last tool calls failed: ${detail}. Read the error messages in the tool results, fix the cause, and try a different approach.`;
    default:
      return detail;
  }
}
