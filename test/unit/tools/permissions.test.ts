import { describe, expect, it } from "vitest";
import {
  answeredByYes,
  APPROVAL_MODES,
  decide,
  decideCall,
  type ApprovalMode,
  matches,
  parseRule,
  type CallFacts,
  type Rules,
} from "../../../src/tools/permissions.js";

const NONE: Rules = { allow: [], ask: [], deny: [] };
const read: CallFacts = { tool: "read_file", toolClass: "explore", path: "src/a.ts" };
const edit: CallFacts = { tool: "edit_file", toolClass: "mutate", path: "src/a.ts" };
const cmd: CallFacts = { tool: "run_command", toolClass: "command", command: "npm test" };

describe("approval modes", () => {
  it("decide each kind of call as the mode says", () => {
    const table = Object.fromEntries(
      APPROVAL_MODES.map((m) => [m, [read, edit, cmd].map((c) => decide(c, m, NONE).decision)]),
    );
    expect(table).toEqual({
      plan: ["allow", "deny", "deny"],
      ask: ["allow", "ask", "ask"],
      edits: ["allow", "allow", "ask"],
      auto: ["allow", "allow", "allow"],
    });
  });

  it("lets a deny rule win over every mode, and over allow rules", () => {
    const rules: Rules = { allow: ["run_command(rm *)"], ask: [], deny: ["run_command(rm -rf*)"] };
    for (const mode of APPROVAL_MODES)
      expect(decide({ ...cmd, command: "rm -rf build" }, mode, rules)).toMatchObject({
        decision: "deny",
        rule: "run_command(rm -rf*)",
      });
    expect(decide({ ...cmd, command: "rm a.txt" }, "ask", rules)).toEqual({
      decision: "allow",
      approved: true,
      rule: "run_command(rm *)",
    });
  });

  it("asks where an ask rule says so even in auto; allow rules skip the mode's question", () => {
    const rules: Rules = { allow: ["edit_file(src/**)"], ask: ["write_file(*.lock)"], deny: [] };
    expect(
      decide({ tool: "write_file", toolClass: "mutate", path: "deep/yarn.lock" }, "auto", rules),
    ).toMatchObject({ decision: "ask", rule: "write_file(*.lock)" });
    expect(decide(edit, "ask", rules)).toMatchObject({ decision: "allow", approved: true });
    expect(decide({ ...edit, path: "test/a.ts" }, "ask", rules).decision).toBe("ask");
  });

  it("denies reads by path too (secrets), and `*` covers every tool", () => {
    const rules: Rules = { ...NONE, deny: ["*(.env)"] };
    expect(decide({ ...read, path: "config/.env" }, "auto", rules).decision).toBe("deny");
    expect(decide({ ...read, path: "config/.env.example" }, "auto", rules).decision).toBe("allow");
  });
});

describe("rules", () => {
  it("parse tool and tool(pattern), and say what is wrong with a bad one", () => {
    expect(parseRule("run_command(git push*)")).toEqual({
      tool: "run_command",
      pattern: "git push*",
      text: "run_command(git push*)",
    });
    expect(parseRule("edit_file")).toEqual({ tool: "edit_file", text: "edit_file" });
    expect(parseRule("run command(x")).toHaveProperty("error");
  });

  it("match a command pattern on any part of a compound command", () => {
    const rule = parseRule("run_command(git push*)") as Exclude<
      ReturnType<typeof parseRule>,
      { error: string }
    >;
    expect(matches(rule, { ...cmd, command: "npm test && git  push origin main" })).toBe(true);
    expect(matches(rule, { ...cmd, command: "git status; echo git push" })).toBe(false);
  });
});

describe("the one decision at the gate (decideCall)", () => {
  const own: CallFacts = { tool: "read_file", toolClass: "explore", path: ".keel/keel.db" };
  const hook: CallFacts = {
    tool: "write_file",
    toolClass: "mutate",
    path: ".git/hooks/pre-commit",
  };
  const commit: CallFacts = { ...cmd, command: "npm test && git commit -am wip" };
  const denyEdits: Rules = { allow: [], ask: [], deny: ["edit_file(src/**)"] };
  const denyGit: Rules = { allow: [], ask: [], deny: ["run_command(git *)"] };
  const allowAll: Rules = { allow: ["*"], ask: [], deny: [] };
  const askCmd: Rules = { allow: [], ask: ["run_command(npm *)"], deny: [] };
  type Row = [CallFacts, ApprovalMode, Rules, boolean, string];
  // call, mode, rules, --yes → decision (and what marks it)
  const table: Row[] = [
    [own, "auto", allowAll, true, "deny keelOwn"],
    [edit, "auto", denyEdits, true, "deny"],
    [edit, "plan", NONE, true, "deny"],
    [read, "plan", NONE, false, "allow"],
    [hook, "auto", allowAll, true, "ask protected"],
    [hook, "plan", NONE, true, "deny"],
    [edit, "ask", NONE, false, "ask"],
    [edit, "ask", NONE, true, "allow approved"],
    [cmd, "edits", NONE, false, "ask"],
    [cmd, "edits", NONE, true, "allow approved"],
    [cmd, "auto", NONE, false, "allow"],
    [cmd, "auto", askCmd, false, "ask"],
    [cmd, "auto", askCmd, true, "allow approved"],
    [edit, "ask", allowAll, false, "allow approved"],
    // a command that writes git: a person, whatever the mode, the allow rules or --yes say
    [commit, "auto", allowAll, true, "ask protected git commit -am wip"],
    [commit, "edits", NONE, false, "ask protected git commit -am wip"],
    [commit, "auto", denyGit, true, "deny"],
    [commit, "plan", NONE, true, "deny"],
    [{ ...cmd, command: "git status && git log -3" }, "auto", NONE, true, "allow"],
  ];
  it.each(table)("%o in %s mode, rules %o, --yes %s → %s", (call, mode, rules, yes, want) => {
    const d = decideCall(call, { mode, rules, autoApprove: yes });
    const marks = [
      d.decision,
      ...("keelOwn" in d && d.keelOwn ? ["keelOwn"] : []),
      ...("protected" in d && d.protected ? ["protected"] : []),
      ...(d.decision === "allow" && d.approved ? ["approved"] : []),
      ...("gitWrite" in d && d.gitWrite ? [d.gitWrite.command] : []),
    ];
    expect(marks.join(" ")).toBe(want);
  });

  it("--yes answers what a person is asked, except running unsandboxed and a protected change", () => {
    expect(answeredByYes({}, true)).toBe(true);
    expect(answeredByYes({}, false)).toBe(false);
    expect(answeredByYes({ unsandboxed: true }, true)).toBe(false);
    expect(answeredByYes({ protected: true }, true)).toBe(false);
  });
});
