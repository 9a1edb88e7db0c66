/**
 * The recovery ladder: what `recover` does at each strike of a failure kind. Pure.
 * hint → re-plan (the failure in the planner's context) → one forced tool-less turn that
 * summarises what was done → ask a human (interactive runs) → end with an honest report.
 */
/**
 * Why a run needs recovery: the failure `recover` counts strikes of. `cut`: the reply stopped at its generation budget (nothing in it
 * ran). The one list of them — the
 * state's schema, the ladder's hints and the timeline's labels all read it.
 */
export const FAILURE_KINDS = [
  "tool_error",
  "unknown_tool",
  "invalid_arguments",
  "loop",
  "repetition",
  "empty",
  "prose",
  "unparseable",
  "cut",
  /** A final answer without the effect the request asked for (coder/requested-effect.ts). */
  "unmet",
  "budget",
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export type RecoveryAction = "hint" | "replan" | "summarize" | "ask" | "end";

/** The ladder's rungs from the bottom; "none": recovery was never needed. */
export const RUNGS = ["none", "hint", "replan", "summarize", "ask", "end"] as const;
export type Rung = (typeof RUNGS)[number];

export interface LadderSettings {
  /** Strikes answered with a hint before re-planning. */
  hints: number;
  /** Re-plans before the summary turn. */
  replans: number;
  interactive: boolean;
}

/**
 * The action for the n-th strike (1-based) of a kind. A loop got its hint inside the tool result
 * at its first hit, so its strikes start past the hint rungs. A spent budget goes straight to the
 * summary turn. After the summary turn (`summarized`), a person is asked if one is there.
 */
export function decideRecovery(
  kind: FailureKind,
  strike: number,
  s: LadderSettings,
  summarized = false,
): RecoveryAction {
  if (summarized) return s.interactive && kind !== "budget" ? "ask" : "end";
  if (kind === "budget") return "summarize";
  const rungs: RecoveryAction[] = [
    ...Array<RecoveryAction>(s.hints).fill("hint"),
    ...Array<RecoveryAction>(s.replans).fill("replan"),
  ];
  const index = strike - 1 + (kind === "loop" ? Math.min(1, s.hints) : 0);
  return rungs[index] ?? "summarize";
}

const EMPTY_NUDGES = [
  "Your last reply was empty. Continue the task: call a tool, or give your final answer as text.",
  "Your reply was empty again. You must either call one of the tools now or write your final answer. Another empty reply ends the run.",
];

/** How an `unmet` failure's detail begins when the missing effect is a command that never ran. */
export const UNRUN = "the request asks for a command to be run, and none ran";

/** The message injected into the model's context for a hint (or with a re-plan). */
export function hintFor(kind: FailureKind, strike: number, detail: string): string {
  switch (kind) {
    case "empty":
      return EMPTY_NUDGES[Math.min(strike, EMPTY_NUDGES.length) - 1]!;
    case "prose":
      return "You described what to do but did not do it: no file was written and no command was run. Do it now with the tools: call write_file with the path and the full content of each file (or edit_file / run_command). Do not answer in prose.";
    case "cut":
      return `${detail[0]!.toUpperCase()}${detail.slice(1)}. Do the same in smaller pieces: write a large file in parts (write_file with its first part, then edit_file to add the rest after its last lines), or keep the content shorter; give one tool call per reply.`;
    case "unmet":
      return `You gave a final answer, but the request is not done: ${detail}. ${
        detail.startsWith(UNRUN)
          ? "Run it now with run_command, as a plain command (no shell redirection: write files with write_file); if it cannot run, say why in your final answer."
          : "Do it now with write_file (the full content), then give your final answer."
      }`;
    case "unparseable":
      return `Your last message tried to call a tool, but the call could not be read: ${detail}`;
    case "unknown_tool":
      return `You called tools that do not exist: ${detail}. Use only the tools you were given, with their exact names.`;
    case "invalid_arguments":
      return `Your tool calls had invalid arguments: ${detail}. Check each field's name and type against the tool's parameters.`;
    case "repetition":
      return `You are repeating yourself: ${detail}. Say something new: take the next step with a tool, or give a short final answer.`;
    case "tool_error":
      return `Your last tool calls failed: ${detail}. Read the error messages in the tool results, fix the cause, and try a different approach.${detail.includes("edit_file") ? " For a file edit_file keeps failing on, call write_file with the file's complete new content instead." : ""}`;
    default:
      return detail;
  }
}

const SUMMARY_INSTRUCTION =
  "Do not call any tools. In a few lines, summarise what you did (files written, commands run), what is still missing, and what you would need to finish.";

/** The instruction of the forced tool-less summary turn. */
export const SUMMARY_REQUEST = (reason: string) =>
  `[keel] The run is being stopped: ${reason}. ${SUMMARY_INSTRUCTION}`;

/**
 * The model's own words in its summary: small models echo keel's request back, whole or from the
 * middle, often many times. The request and its instruction are taken out, and every line in keel's
 * voice; "" when nothing of the model's own is left.
 */
export function ownSummary(summary: string, request: string): string {
  const own = [request, SUMMARY_INSTRUCTION]
    .reduce((text, echo) => text.split(echo).join("\n"), summary)
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("[keel]"))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return /[\p{L}\p{N}]/u.test(own) ? own : "";
}
