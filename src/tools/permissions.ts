/**
 * Who decides whether a tool call runs, in one place and pure: keel's own folder, protected paths,
 * the approval mode, the user's rules and `--yes` (`decideCall`); and whether `--yes` answers what
 * a tool declares it needs of a person beyond that (`answeredByYes`). The gate
 * (coder/nodes/tool-gate.ts) is the one place that asks a person, where these say "ask".
 *
 * The rules' order (`decide`, the first that applies decides):
 *   1. a deny rule → refused, in every mode, whatever `--yes` says;
 *   2. plan mode → anything that changes files or runs commands is refused (read-only);
 *   3. an ask rule → a person is asked;
 *   4. an allow rule → runs, and counts as approved (a command it allows that reaches beyond the
 *      workspace is not asked about again);
 *   5. reading tools run;
 *   6. the mode: ask → every change and command is asked; edits → file changes run, commands are
 *      asked; auto → both run.
 * Before the rules' allow and the mode, whatever they say: a file change in a protected path and a
 * command that writes git are asked of a person (`decideCall`).
 * Beside these, a tool declares what a call needs (`KeelTool.declare`): run_command's built-in rule
 * set asks about a command that reaches beyond the workspace (installs, network, sudo) unless an
 * allow rule or `--yes` covers it, and one that cannot be sandboxed needs a person; the gate puts
 * both in one question.
 *
 * A rule is `tool` or `tool(pattern)`, the tool `*` for any: for tools with a path argument the
 * pattern is a glob on the workspace-relative path (`src/**`, `*.env`: a pattern without `/`
 * matches the file name anywhere); for run_command it is a pattern on the command, `*` for any text,
 * tried on the whole command and on each part between `&&`, `||`, `;`, `|`.
 */
import picomatch from "picomatch";
import { isKeelOwn, protectedEntry, type ProtectedPath } from "../sandbox/protected.js";
import { gitWriteOf, type GitWrite } from "./command-policy.js";
import type { ToolClass } from "./types.js";

export const APPROVAL_MODES = ["plan", "ask", "edits", "auto"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

/** What each mode means, for help texts. */
export const APPROVAL_MODE_HELP: Record<ApprovalMode, string> = {
  plan: "read-only: the agent reads and answers with a plan, changes nothing",
  ask: "ask before every file change and every command",
  edits: "apply file edits, ask before commands",
  auto: "apply edits and run commands (in the sandbox); beyond-the-workspace commands still ask",
};

export interface Rules {
  allow: readonly string[];
  ask: readonly string[];
  deny: readonly string[];
}

export interface Rule {
  tool: string;
  pattern?: string;
  text: string;
}

export type Verdict =
  | { decision: "allow"; approved: boolean; rule?: string }
  | { decision: "ask" | "deny"; reason: string; rule?: string };

/** What the rules see of a call. */
export interface CallFacts {
  tool: string;
  toolClass: ToolClass;
  /** Workspace-relative path of a file tool's call. */
  path?: string;
  /** run_command's command. */
  command?: string;
}

const RULE = /^\s*([A-Za-z0-9_.*-]+)\s*(?:\((.*)\))?\s*$/s;

/** A rule's parts, or why it is not a rule. */
export function parseRule(text: string): Rule | { error: string } {
  const m = RULE.exec(text);
  if (!m)
    return {
      error: `"${text}" is not a rule: write tool or tool(pattern), e.g. run_command(git push*) or edit_file(src/**)`,
    };
  const pattern = m[2]?.trim();
  return { tool: m[1]!, ...(pattern ? { pattern } : {}), text: text.trim() };
}

/** The decision on one call. */
export function decide(call: CallFacts, mode: ApprovalMode, rules: Rules): Verdict {
  const deny = firstMatch(rules.deny, call);
  if (deny) return { decision: "deny", reason: `the deny rule ${deny} forbids it`, rule: deny };
  const changes = call.toolClass !== "explore";
  if (mode === "plan" && changes)
    return {
      decision: "deny",
      reason:
        "this run is in plan mode (read-only): nothing may be changed or run. Describe the change in your plan instead",
    };
  const ask = firstMatch(rules.ask, call);
  if (ask) return { decision: "ask", reason: `the ask rule ${ask}`, rule: ask };
  const allow = firstMatch(rules.allow, call);
  if (allow) return { decision: "allow", approved: true, rule: allow };
  if (!changes) return { decision: "allow", approved: false };
  if (mode === "ask") return { decision: "ask", reason: "approval mode ask" };
  if (mode === "edits" && call.toolClass === "command")
    return { decision: "ask", reason: "approval mode edits: commands are asked" };
  return { decision: "allow", approved: false };
}

function firstMatch(rules: readonly string[], call: CallFacts): string | undefined {
  return rules.find((text) => {
    const rule = parseRule(text);
    return !("error" in rule) && matches(rule, call);
  });
}

/** Whether a rule covers a call. */
export function matches(rule: Rule, call: CallFacts): boolean {
  if (rule.tool !== "*" && rule.tool !== call.tool) return false;
  if (rule.pattern === undefined) return true;
  if (call.command !== undefined) return commandMatches(rule.pattern, call.command);
  if (call.path !== undefined)
    return picomatch.isMatch(call.path, rule.pattern, {
      dot: true,
      basename: !rule.pattern.includes("/"),
    });
  return false;
}

const normalise = (s: string) => s.trim().replace(/\s+/g, " ");

function commandMatches(pattern: string, command: string): boolean {
  const re = new RegExp(
    `^${normalise(pattern)
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
    "s",
  );
  const parts = [command, ...command.split(/&&|\|\||;|\||\n/)];
  return parts.some((p) => re.test(normalise(p)));
}

/** What the gate decides with: the run's approval mode, the user's rules and `--yes`. */
export interface Policy {
  mode: ApprovalMode;
  rules: Rules;
  /** `--yes`: a person's "yes" to every question but the ones only a person may answer. */
  autoApprove: boolean;
  /** Workspace paths the person's own config names as code it runs (sandbox/git-named.ts): protected too. */
  named?: readonly ProtectedPath[];
}

/** The decision on a call at the gate, before it runs. */
export type Decision =
  | { decision: "allow"; approved: boolean }
  | {
      decision: "ask";
      reason: string;
      /**
       * A file change in a protected path, or a command that writes git: only a person who sees
       * it may allow it, not `--yes`.
       */
      protected?: true;
      /** The command's git write (command-policy.ts `gitWriteOf`): approved, it may write `.git`. */
      gitWrite?: GitWrite;
    }
  | {
      decision: "deny";
      reason: string;
      /** A call on keel's own folder (`.keel/`): refused to every tool, whatever the rules say. */
      keelOwn?: true;
    };

/**
 * The one decision on a call (the module comment): keel's own folder is refused; a deny rule or
 * plan mode refuses; a file change in a protected path, or a command that writes git (`.git` is
 * read-only to every other command: sandbox/protected.ts), asks a person whatever the mode, the
 * allow rules or `--yes` say; otherwise the rules and the mode decide, and `--yes` answers their
 * "ask".
 */
export function decideCall(call: CallFacts, policy: Policy): Decision {
  if (call.path !== undefined && isKeelOwn(call.path))
    return {
      decision: "deny",
      reason: "keel's project settings and reports are there, and no tool may read or change them",
      keelOwn: true,
    };
  const verdict = decide(call, policy.mode, policy.rules);
  if (verdict.decision === "deny") return { decision: "deny", reason: verdict.reason };
  const gitWrite = call.command === undefined ? undefined : gitWriteOf(call.command);
  if (gitWrite)
    return {
      decision: "ask",
      reason: `\`git ${gitWrite.subcommand}\` writes the repository's .git, which only a person who sees the command may allow`,
      protected: true,
      gitWrite,
    };
  const guarded =
    call.toolClass === "mutate" && call.path !== undefined
      ? protectedEntry(call.path, policy.named)
      : undefined;
  if (guarded)
    return {
      decision: "ask",
      reason: `${call.path} is protected: ${guarded.why}, outside the sandbox`,
      protected: true,
    };
  if (verdict.decision === "allow") return { decision: "allow", approved: verdict.approved };
  if (policy.autoApprove) return { decision: "allow", approved: true };
  return { decision: "ask", reason: verdict.reason };
}

/**
 * Whether `--yes` answers a question put to a person: never for running a command outside the
 * sandbox, nor for a change to a protected path.
 */
export function answeredByYes(
  question: { unsandboxed?: boolean; protected?: boolean },
  autoApprove: boolean,
): boolean {
  return autoApprove && !question.unsandboxed && !question.protected;
}
