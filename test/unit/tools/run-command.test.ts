/** run_command: in the workspace, its exit code and output, its timeout, what needs a person, its output capped. */
import { describe, expect, it } from "vitest";
import { runCommandTool } from "../../../src/tools/run-command.js";
import { run, context } from "../../support/tools.js";

describe("run_command", () => {
  it("runs in the workspace and returns the exit code and output", async () => {
    const ctx = context();
    const r = await run("run_command", { command: "pwd && echo hi" }, ctx);
    expect(r).toEqual({ ok: true, output: `exit code 0\n${ctx.workspace}\nhi` });
  });
  it("reports a failing command as an error with its output", async () => {
    const r = await run("run_command", { command: "echo oops 1>&2; exit 3" }, context());
    expect(r).toEqual({ ok: false, kind: "failed", message: "run_command: exit code 3\noops" });
  });
  it("kills a command at its timeout", async () => {
    const r = await run("run_command", { command: "sleep 5", timeout_ms: 200 }, context());
    expect(r).toMatchObject({ ok: false, kind: "timeout" });
  });
  it("declares what needs a person, refuses it unless the gate allowed it, runs it when allowed", async () => {
    const refused = await run(
      "run_command",
      { command: "curl --version > /dev/null; echo ran" },
      context(),
    );
    expect(refused).toMatchObject({ ok: false, kind: "needs_approval" });
    expect(!refused.ok && refused.message).toContain("--yes");
    const command = "kill -0 $$ ; echo ran";
    const declared = await runCommandTool.declare!({ command }, context());
    expect(declared.ask?.reason).toMatch(/kill/);
    expect(await run("run_command", { command }, context())).toMatchObject({
      kind: "needs_approval",
    });
    const approved = await run("run_command", { command }, context({ approved: true }));
    expect(approved).toMatchObject({ ok: true });
    expect(approved.ok && approved.output).toContain("ran");
  });
  it("caps output, keeping head and tail", async () => {
    const r = await run("run_command", { command: "seq 1 20000" }, context());
    expect(r.ok && r.output).toMatch(/^exit code 0\n1\n2\n[\s\S]*characters cut[\s\S]*20000$/);
  });
});
