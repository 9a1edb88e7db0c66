/**
 * The gate before a tool call runs: the approval mode and the user's rules decide (tools/permissions),
 * and where they say "ask", a person is asked: interactively through a LangGraph interrupt (the CLI's
 * prompt, Studio's resume), by `--yes`, or, with nobody there, the call is refused with the fix.
 */
import { interrupt } from "@langchain/langgraph";
import type { TrailEntry } from "../../guard/loop.js";
import { pathOf } from "../../tools/fs-tools.js";
import { decide, type CallFacts } from "../../tools/permissions.js";
import { isKeelOwn, KEEL_DIR, protectedEntry } from "../../sandbox/protected.js";
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

/** What a person is shown of a file change before approving it: the content, or the edit. */
export function changePreview(tool: KeelTool, args: unknown): string {
  const a = (args ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  const clip = (v: string) =>
    v.length > 4000 ? `${v.slice(0, 4000)}\n[… ${v.length - 4000} more characters]` : v;
  if (tool.name === "edit_file")
    return `replace:\n${clip(text(a.old_text))}\nwith:\n${clip(text(a.new_text))}`;
  if ("content" in a) return `content:\n${clip(text(a.content))}`;
  return JSON.stringify(a);
}

/**
 * Whether a resolved call may run, asking a person where the rules say so. A file change in a
 * protected path (sandbox/protected.ts) needs a person who sees `preview`, whatever the mode, the
 * allow rules or `--yes` say; one in keel's own folder is refused to every tool.
 */
export function gate(facts: CallFacts, env: NodeEnv, preview = ""): GateVerdict {
  const s = env.settings;
  if (facts.path !== undefined && isKeelOwn(facts.path))
    return {
      run: false,
      result: fail(
        "refused",
        `${facts.tool} refused: ${KEEL_DIR}/ holds keel's own settings and records, and no tool may read or change it. Do the task without it.`,
      ),
    };
  const guarded =
    facts.toolClass === "mutate" && facts.path !== undefined
      ? protectedEntry(facts.path)
      : undefined;
  if (guarded) {
    const denied = decide(facts, s.approval, rulesOf(s));
    if (denied.decision === "deny")
      return { run: false, result: fail("refused", `${facts.tool} refused: ${denied.reason}.`) };
    const reason = `${facts.path} is protected: ${guarded.why}, outside the sandbox`;
    if (
      approver(env)({
        tool: facts.tool,
        command: describeCall(facts),
        reason,
        protected: true,
        preview,
      })
    )
      return { run: true, approved: true };
    return {
      run: false,
      result: fail(
        "needs_approval",
        `${facts.tool} was not run: ${reason}, so only a person who sees the change may allow it, and none did (--yes does not). Do the task without changing ${facts.path}, or finish and say what should be written there.`,
      ),
    };
  }
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

/**
 * Asks a person through an interrupt; `--yes` answers yes except for running unsandboxed and for a
 * protected path (only a person who saw the change may allow those).
 */
export function approver(env: NodeEnv): Approver {
  return (req) => {
    if (env.settings.autoApprove && !req.unsandboxed && !req.protected) return true;
    if (!env.settings.interactive) return false;
    const answer: unknown = interrupt({
      type: "approval",
      ...req,
      question: `Allow \`${req.command}\`? (${req.reason})${req.preview ? `\n${req.preview}` : ""}`,
    });
    const approved =
      answer === true || (typeof answer === "string" && /^y(es)?$/i.test(answer.trim()));
    env.emit({ type: "approval", command: req.command, approved });
    return approved;
  };
}
