/**
 * The gate before a tool call runs: the approval mode and the user's rules decide (tools/permissions),
 * and where they say "ask", a person is asked: interactively through a LangGraph interrupt (the CLI's
 * prompt, Studio's resume), by `--yes`, or, with nobody there, the call is refused with the fix.
 */
import { interrupt } from "@langchain/langgraph";
import type { TrailEntry } from "../../guard/loop.js";
import { pathOf } from "../../tools/fs-tools.js";
import { decide, type CallFacts } from "../../tools/permissions.js";
import { fail, type Approver, type KeelTool, type ToolResult } from "../../tools/types.js";
import type { NodeEnv } from "../runtime.js";
import { rulesOf } from "../context.js";

export type GateVerdict = { run: true; approved: boolean } | { run: false; result: ToolResult };

/**
 * What the rules, the person asked and the undo journal see of a call: its tool, its path relative
 * to the workspace (however the model wrote it: `./src/a.ts` and an absolute path inside the
 * workspace are the same file, for the rules too), and run_command's command.
 */
export function callFacts(
  tool: KeelTool,
  args: unknown,
  entry: TrailEntry,
  workspace: string,
): CallFacts {
  const given = (args as { command?: unknown } | null)?.command;
  const command = tool.name === "run_command" && typeof given === "string" ? given : undefined;
  const path =
    entry.target === undefined ? undefined : (pathOf(workspace, entry.target)[0] ?? entry.target);
  return {
    tool: tool.name,
    toolClass: tool.toolClass,
    ...(path !== undefined ? { path } : {}),
    ...(command !== undefined ? { command } : {}),
  };
}

/** A call in a few words: "edit_file src/a.ts", "run_command npm test". */
export function describeCall(facts: CallFacts): string {
  const about = facts.command?.slice(0, 80) ?? facts.path;
  return about ? `${facts.tool} ${about}` : facts.tool;
}

/** Whether a resolved call may run, asking a person where the rules say so. */
export function gate(facts: CallFacts, env: NodeEnv): GateVerdict {
  const s = env.settings;
  const verdict = decide(facts, s.approval, rulesOf(s));
  if (verdict.decision === "allow") return { run: true, approved: verdict.approved };
  if (verdict.decision === "deny")
    return {
      run: false,
      result: fail(
        "refused",
        `${facts.tool} refused: ${verdict.reason}. Do not retry it; do the task another way or say what is needed.`,
      ),
    };
  const what = facts.command ?? describeCall(facts);
  if (approver(env)({ tool: facts.tool, command: what, reason: verdict.reason }))
    return { run: true, approved: true };
  return {
    run: false,
    result: fail(
      "needs_approval",
      `${facts.tool} was not run: it needs a person's approval (${verdict.reason}) and none was given. (The user can answer interactively, pass --yes, or change --approval / the rules.) Do the task without it, or finish and say what is needed.`,
    ),
  };
}

/** Whether the check command after a file change may run without asking (tools/post-edit). */
export function checkAllowed(env: NodeEnv) {
  return (command: string): { run: true } | { run: false; why: string } => {
    const s = env.settings;
    const verdict = decide(
      { tool: "run_command", toolClass: "command", command },
      s.approval,
      rulesOf(s),
    );
    if (verdict.decision === "allow" || (verdict.decision === "ask" && s.autoApprove))
      return { run: true };
    return { run: false, why: verdict.reason };
  };
}

/** Asks a person through an interrupt; `--yes` answers yes except for running unsandboxed. */
export function approver(env: NodeEnv): Approver {
  return (req) => {
    if (env.settings.autoApprove && !req.unsandboxed) return true;
    if (!env.settings.interactive) return false;
    const answer: unknown = interrupt({
      type: "approval",
      ...req,
      question: `Allow \`${req.command}\`? (${req.reason})`,
    });
    const approved =
      answer === true || (typeof answer === "string" && /^y(es)?$/i.test(answer.trim()));
    env.emit({ type: "approval", command: req.command, approved });
    return approved;
  };
}
