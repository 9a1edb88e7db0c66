/**
 * The gate before a tool call runs: tools/permissions.ts decides (keel's own folder, protected
 * paths, the approval mode, the rules, `--yes`), and where it says "ask", a person is asked through
 * a LangGraph interrupt (the CLI's prompt, Studio's resume), or, with nobody there, the call is
 * refused with the fix.
 */
import path from "node:path";
import { interrupt } from "@langchain/langgraph";
import { printable } from "../../printable.js";
import type { TrailEntry } from "../../guard/loop.js";
import { pathOf } from "../../tools/fs-tools.js";
import { answeredByYes, decideCall, type CallFacts, type Policy } from "../../tools/permissions.js";
import {
  configDirOf,
  gitNamedPaths,
  newLook,
  personalConfig,
  personalNames,
} from "../../sandbox/git-named.js";
import { gitFoldersOn } from "../../sandbox/git-folders.js";
import { protectedSetting, settingRulesOf } from "../../sandbox/protected-settings.js";
import { yarnNamedOn } from "../../sandbox/yarn-named.js";
import { KEEL_DIR, type ProtectedPath } from "../../sandbox/protected.js";
import { lstatOf, readInSync } from "../../files/door.js";
import { applyEdit } from "../../tools/edit-match.js";
import { fail, type Approver, type KeelTool, type ToolResult } from "../../tools/types.js";
import type { NodeEnv } from "../runtime.js";
import { rulesOf } from "../context.js";

export type GateVerdict =
  | {
      run: true;
      approved: boolean;
      /** A person approved the command's write to git: it runs with `.git` writable (run-command.ts). */
      gitWritable?: true;
    }
  | { run: false; result: ToolResult };

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
function settingAdded(
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

/**
 * Whether a resolved call may run: the decision is `decideCall`'s (tools/permissions.ts); where it
 * says "ask", a person is asked — shown `preview` for a file change — or, with nobody there, the
 * call is refused with what would allow it.
 */
export function gate(
  facts: CallFacts,
  env: NodeEnv,
  preview = "",
  change: FileChange | undefined = undefined,
): GateVerdict {
  const named =
    facts.toolClass === "mutate" && facts.path !== undefined
      ? [
          ...gitNamedOf(env, facts.path),
          ...gitFoldersOn(env.workspace, facts.path),
          ...yarnNamedOn(env.workspace, facts.path),
          ...settingAdded(env.workspace, facts.path, change),
        ]
      : [];
  const d = decideCall(facts, { ...policyOf(env), named });
  if (d.decision === "allow") return { run: true, approved: d.approved };
  if (d.decision === "deny")
    return {
      run: false,
      result: fail(
        "refused",
        d.keelOwn
          ? `${facts.tool} refused: ${KEEL_DIR}/ holds keel's project settings and reports, and no tool may read or change it. Do the task without it.`
          : `${facts.tool} refused: ${d.reason}. Do not retry it; do the task another way or say what is needed.`,
      ),
    };
  if (d.gitWrite) {
    if (
      askPerson(env, {
        tool: facts.tool,
        command: facts.command!,
        reason: d.reason,
        protected: true,
      })
    )
      return { run: true, approved: true, gitWritable: true };
    return {
      run: false,
      result: fail(
        "needs_approval",
        `${facts.tool} was not run: ${d.reason}, and none did (--yes does not). .git is read-only to commands: do the rest of the task without it, and say in your answer which git command is needed (\`${d.gitWrite.command.slice(0, 200)}\`), so that the person can run it.`,
      ),
    };
  }
  if (d.protected) {
    if (preview.length > PREVIEW_MAX)
      return {
        run: false,
        result: fail(
          "needs_approval",
          `${facts.tool} was not run: ${d.reason}, so a person must read the change before it is made, and at ${preview.length.toLocaleString("en")} characters it is too long to show (at most ${PREVIEW_MAX.toLocaleString("en")}). Write a shorter file there, or finish and say what should be written.`,
        ),
      };
    if (
      askPerson(env, {
        tool: facts.tool,
        command: describeCall(facts),
        reason: d.reason,
        protected: true,
        preview,
      })
    )
      return { run: true, approved: true };
    return {
      run: false,
      result: fail(
        "needs_approval",
        `${facts.tool} was not run: ${d.reason}, so only a person who sees the change may allow it, and none did (--yes does not). Do the task without changing ${facts.path}, or finish and say what should be written there.`,
      ),
    };
  }
  if (
    askPerson(env, {
      tool: facts.tool,
      command: facts.command ?? describeCall(facts),
      reason: d.reason,
    })
  )
    return { run: true, approved: true };
  return {
    run: false,
    result: fail(
      "needs_approval",
      `${facts.tool} was not run: it needs a person's approval (${d.reason}) and none was given. (The user can answer interactively, pass --yes, or change --approval / the rules.) Do the task without it, or finish and say what is needed.`,
    ),
  };
}

/** The run's approval policy: its mode, its rules and `--yes`. */
const policyOf = (env: NodeEnv): Policy => ({
  mode: env.settings.approval,
  rules: rulesOf(env.settings),
  autoApprove: env.settings.autoApprove,
});

/**
 * The workspace paths the person's git config names (sandbox/git-named.ts) where a file change
 * lands: the config of the nearest repository around it, and the names the person's own config
 * gives in every repository (at any depth: a folder that is no repository yet may become one).
 * Asked of git once per run and repository (the agent cannot change that config; a repository it
 * makes is asked when first written to).
 */
const gitNamed = new WeakMap<
  object,
  { deep: ProtectedPath[]; byDir: Map<string, ProtectedPath[]> }
>();
function gitNamedOf(env: NodeEnv, rel: string): ProtectedPath[] {
  let run = gitNamed.get(env.settings);
  if (run === undefined) {
    const look = newLook();
    const top = gitNamedPaths(env.workspace, env.workspace, undefined, look);
    const deep = personalNames(personalConfig(look) ?? []);
    run = { deep, byDir: new Map([[env.workspace, top]]) };
    gitNamed.set(env.settings, run);
  }
  const dir = configDirOf(env.workspace, rel);
  let named = run.byDir.get(dir);
  if (named === undefined) run.byDir.set(dir, (named = gitNamedPaths(env.workspace, dir)));
  return [...named, ...run.deep];
}

/** Whether the check command after a file change may run without asking (tools/post-edit). */
export function checkAllowed(env: NodeEnv) {
  return (command: string): { run: true } | { run: false; why: string } => {
    const d = decideCall({ tool: "run_command", toolClass: "command", command }, policyOf(env));
    return d.decision === "allow" ? { run: true } : { run: false, why: d.reason };
  };
}

/**
 * The approver tools are given (run_command asks it about commands beyond the workspace or outside
 * the sandbox): `--yes` answers where `answeredByYes` says it may, else a person is asked.
 */
export function approver(env: NodeEnv): Approver {
  return (req) => answeredByYes(req, env.settings.autoApprove) || askPerson(env, req);
}

/** Asks a person through an interrupt (the CLI's prompt, Studio's resume); no one there is a no. */
function askPerson(env: NodeEnv, req: Parameters<Approver>[0]): boolean {
  if (!env.settings.interactive) return false;
  const command = printable(req.command);
  const answer: unknown = interrupt({
    type: "approval",
    ...req,
    command,
    question: `Allow \`${command}\`? (${printable(req.reason)})${req.preview ? `\n${req.preview}` : ""}`,
  });
  const approved =
    answer === true || (typeof answer === "string" && /^y(es)?$/i.test(answer.trim()));
  env.emit({ type: "approval", command: req.command, approved });
  return approved;
}
