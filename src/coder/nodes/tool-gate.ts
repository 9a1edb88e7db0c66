/**
 * The gate before a tool call runs: tools/permissions.ts decides (keel's own folder, protected
 * paths, the approval mode, the rules, `--yes`), and where it says "ask", a person is asked through
 * a LangGraph interrupt (the CLI's prompt, Studio's resume), or, with nobody there, the call is
 * refused with the fix.
 */
import { interrupt } from "@langchain/langgraph";
import { printable } from "../../printable.js";
import type { TrailEntry } from "../../guard/loop.js";
import { pathOf } from "../../tools/fs-tools.js";
import {
  answeredByYes,
  decideCall,
  type CallFacts,
  type Decision,
  type Policy,
} from "../../tools/permissions.js";
import {
  configDirOf,
  gitNamedPaths,
  newLook,
  personalConfig,
  personalNames,
} from "../../sandbox/git-named.js";
import { gitFoldersOn } from "../../sandbox/git-folders.js";
import { yarnNamedOn } from "../../sandbox/yarn-named.js";
import { KEEL_DIR, type ProtectedPath } from "../../sandbox/protected.js";
import type { CheckVerdict } from "../../tools/post-edit.js";
import { runCommandTool } from "../../tools/run-command.js";
import {
  fail,
  type Declared,
  type KeelTool,
  type ToolContext,
  type ToolResult,
} from "../../tools/types.js";
import type { NodeEnv } from "../runtime.js";
import { rulesOf } from "../context.js";
import { PREVIEW_MAX, settingAdded, type FileChange } from "./file-change.js";

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

/**
 * Whether a resolved call may run — the one place that decides, and the only one that asks a
 * person. The decision is `decideCall`'s (tools/permissions.ts) with what the tool declared of the
 * call (`declared`: a command beyond the workspace or outside the sandbox, an MCP call); where a
 * person must answer, one question covers both and shows `preview` for a file change; with nobody
 * there, the call is refused with what would allow it.
 */
export function gate(
  facts: CallFacts,
  env: NodeEnv,
  preview = "",
  change: FileChange | undefined = undefined,
  declared: Declared = {},
): GateVerdict {
  const d = decideCall(facts, { ...policyOf(env), named: namedFor(facts, env, change) });
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
  if (declared.refuse)
    return { run: false, result: fail("refused", `${facts.tool} refused: ${declared.refuse}`) };
  if (d.decision === "allow") return gateAllowed(facts, env, d.approved, declared.ask);
  // the policy asks a person too: one question, for both
  if (d.gitWrite) return askGitWrite(facts, env, d, declared.ask);
  if (d.protected) return askProtected(facts, env, d, preview, declared.ask);
  return askApproval(facts, env, d, declared.ask);
}

/** A decision that asks a person (`decideCall`). */
type AskDecision = Extract<Decision, { decision: "ask" }>;
/** What a tool declared it must ask a person of a call. */
type Ask = Declared["ask"];

/**
 * The paths named where a file change lands (protected too: the person's git config's, git
 * folders on the way, the yarn configs', a setting that runs code the change adds), none for
 * another call.
 */
function namedFor(facts: CallFacts, env: NodeEnv, change: FileChange | undefined): ProtectedPath[] {
  return facts.toolClass === "mutate" && facts.path !== undefined
    ? [
        ...gitNamedOf(env, facts.path),
        ...gitFoldersOn(env.workspace, facts.path),
        ...yarnNamedOn(env.workspace, facts.path),
        ...settingAdded(env.workspace, facts.path, change),
      ]
    : [];
}

/** A call the policy allows: it runs, unless the tool asks a person what the policy does not cover. */
function gateAllowed(facts: CallFacts, env: NodeEnv, approved: boolean, ask: Ask): GateVerdict {
  if (!ask) return { run: true, approved };
  if (covered(approved, ask, env.settings.autoApprove)) return { run: true, approved: true };
  const question = {
    tool: facts.tool,
    command: ask.shown ?? facts.command ?? describeCall(facts),
    reason: ask.reason,
    ...(ask.unsandboxed && { unsandboxed: true }),
  };
  return askPerson(env, question)
    ? { run: true, approved: true }
    : { run: false, result: fail("needs_approval", ask.refused) };
}

/** The reason a person is asked for (the policy's, and the tool's when it asks too). */
const reasonOf = (d: AskDecision, ask: Ask) => (ask ? `${d.reason}; and ${ask.reason}` : d.reason);
/** Whether the question says the call runs outside the sandbox. */
const outsideOf = (ask: Ask) => (ask?.unsandboxed ? { unsandboxed: true } : {});

/** A command that writes git: runs with `.git` writable only when a person approves. */
function askGitWrite(facts: CallFacts, env: NodeEnv, d: AskDecision, ask: Ask): GateVerdict {
  if (
    askPerson(env, {
      tool: facts.tool,
      command: facts.command!,
      reason: reasonOf(d, ask),
      protected: true,
      ...outsideOf(ask),
    })
  )
    return { run: true, approved: true, gitWritable: true };
  return {
    run: false,
    result: fail(
      "needs_approval",
      `${facts.tool} was not run: ${d.reason}, and none did (--yes does not). .git is read-only to commands: do the rest of the task without it, and say in your answer which git command is needed (\`${d.gitWrite!.command.slice(0, 200)}\`), so that the person can run it.`,
    ),
  };
}

/** A change to a protected path: only a person who sees it whole may allow it. */
function askProtected(
  facts: CallFacts,
  env: NodeEnv,
  d: AskDecision,
  preview: string,
  ask: Ask,
): GateVerdict {
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
      reason: reasonOf(d, ask),
      protected: true,
      ...outsideOf(ask),
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

/** Any other call the policy asks about: a person (or `--yes`, in the prompt) allows it. */
function askApproval(facts: CallFacts, env: NodeEnv, d: AskDecision, ask: Ask): GateVerdict {
  if (
    askPerson(env, {
      tool: facts.tool,
      command: ask?.shown ?? facts.command ?? describeCall(facts),
      reason: reasonOf(d, ask),
      ...outsideOf(ask),
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

/**
 * Whether the check command after a file change may run without asking (tools/post-edit), and as
 * what: the policy allows it and covers what run_command declares of it — a check never asks.
 */
export function checkAllowed(env: NodeEnv, ctx: ToolContext) {
  return async (command: string): Promise<CheckVerdict> => {
    const d = decideCall({ tool: "run_command", toolClass: "command", command }, policyOf(env));
    if (d.decision !== "allow") return { run: false, why: d.reason };
    const { refuse, ask } = await runCommandTool.declare!({ command }, ctx);
    if (refuse) return { run: false, why: refuse };
    if (ask && !covered(d.approved, ask, env.settings.autoApprove))
      return { run: false, why: `${ask.reason}, and a check is not asked of a person` };
    return { run: true, approved: ask !== undefined };
  };
}

/** An allow rule or `--yes` covers what a tool asks, but for running outside the sandbox. */
const covered = (
  approvedByPolicy: boolean,
  ask: NonNullable<Declared["ask"]>,
  autoApprove: boolean,
) => (approvedByPolicy && !ask.unsandboxed) || answeredByYes(ask, autoApprove);

/** A question for a person: the call, why it needs them, and what they are shown of it. */
interface Question {
  tool: string;
  command: string;
  reason: string;
  /** The call would run without the OS sandbox: only a person may allow it, not `--yes`. */
  unsandboxed?: boolean;
  /** A write to a protected path (sandbox/protected.ts): only a person may allow it, not `--yes`. */
  protected?: boolean;
  /** What the person is shown of the change (the content written, the edit). */
  preview?: string;
}

/** Asks a person through an interrupt (the CLI's prompt, Studio's resume); no one there is a no. */
function askPerson(env: NodeEnv, req: Question): boolean {
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
