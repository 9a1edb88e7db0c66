/**
 * Approval modes and rules on the coder graph against the fake Ollama: what each mode runs, asks
 * and refuses, a deny rule under auto (and --yes), ask rules, a person's answer through the
 * interrupt (the path Studio resumes), project rules that add to the user's, and the post-edit check.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it, vi } from "vitest";
import type { SettingsInput } from "../../src/coder/context.js";
import { workspaceState } from "../../src/files/state.js";
import { outcome } from "../../src/session/outcome.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  runCoder,
  tempWorkspace,
  toolMessages,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();

/** Writes a file, then runs a command, then answers. */
const script = keelScript((req) => {
  if (req.turn === 0) return calls(call("write_file", { path: "a.txt", content: "A\n" }));
  if (req.turn === 1) return calls(call("run_command", { command: "touch ran.txt" }));
  return { content: "Finished." };
});

async function runMode(context: Partial<SettingsInput>, ws = tempWorkspace()) {
  const fake = await startFake({ script });
  const run = await runCoder(fake, "Create a.txt and run the build", {
    workspace: ws,
    context: { runCommandsUnsandboxed: true, ...context },
  });
  const bodies = fake.chatBodies({ turnsOnly: true });
  // every tool result the model was shown, once each, in order
  const results = [...new Set(bodies.flatMap((b) => toolMessages(b).map((m) => m.content)))];
  return {
    ...run,
    results,
    wrote: existsSync(path.join(ws, "a.txt")),
    ran: existsSync(path.join(ws, "ran.txt")),
    offered: (bodies[0]!.tools ?? []).map((t) => t.function.name),
  };
}

describe("approval modes (non-interactive)", () => {
  it("plan: read-only tools only, and a plan in prose is the answer", async () => {
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("list_dir", { path: "." }))
          : { content: "Plan: 1. create a.txt 2. run the build." },
      ),
    });
    const ws = tempWorkspace();
    const r = await runCoder(fake, "Create a.txt and run the build", {
      workspace: ws,
      context: { approval: "plan" },
    });
    const first = fake.chatBodies({ turnsOnly: true })[0]!;
    expect((first.tools ?? []).map((t) => t.function.name)).toEqual([
      "read_file",
      "list_dir",
      "glob",
      "grep",
      "analyze_code",
    ]);
    expect(first.messages?.[0]?.content).toContain("This run is in PLAN mode: read-only.");
    expect(r.state).toMatchObject({
      status: "done",
      summary: "Plan: 1. create a.txt 2. run the build.",
    });
  });

  it("ask: every change and every command waits for a person", async () => {
    const r = await runMode({ approval: "ask" });
    expect([r.wrote, r.ran]).toEqual([false, false]);
    expect(r.results).toEqual([
      expect.stringMatching(
        /^Error \[needs_approval\]: write_file was not run: it needs a person's approval \(approval mode ask\)/,
      ),
      expect.stringMatching(
        /^Error \[needs_approval\]: run_command was not run: .*approval mode edits|approval mode ask/,
      ),
    ]);
  });

  it("edits: file edits apply, commands ask", async () => {
    const r = await runMode({ approval: "edits" });
    expect([r.wrote, r.ran]).toEqual([true, false]);
    expect(r.results[1]).toContain("approval mode edits: commands are asked");
  });

  it("auto: both run; --yes answers the questions of ask", async () => {
    expect(await runMode({ approval: "auto" })).toMatchObject({ wrote: true, ran: true });
    expect(await runMode({ approval: "ask", autoApprove: true })).toMatchObject({
      wrote: true,
      ran: true,
    });
  });

  it("a deny rule wins under auto, even with --yes", async () => {
    const r = await runMode({
      approval: "auto",
      autoApprove: true,
      denyRules: ["run_command(touch *)"],
    });
    expect([r.wrote, r.ran]).toEqual([true, false]);
    expect(r.results[1]).toBe(
      "Error [refused]: run_command refused: the deny rule run_command(touch *) forbids it. Do not retry it; do the task another way or say what is needed.",
    );
  });

  it("a path rule holds however the model writes the path (./, an absolute path inside the workspace)", async () => {
    const ws = tempWorkspace();
    const fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0)
          return calls(
            call("write_file", { path: `${ws}/migrations/001.sql`, content: "DROP;\n" }),
          );
        if (req.turn === 1)
          return calls(call("write_file", { path: "./migrations/002.sql", content: "DROP;\n" }));
        return { content: "Finished." };
      }),
    });
    await runCoder(fake, "Add the migrations", {
      workspace: ws,
      context: { denyRules: ["write_file(migrations/**)"] },
    });
    expect(existsSync(path.join(ws, "migrations"))).toBe(false);
    const results = fake
      .chatBodies({ turnsOnly: true })
      .flatMap((b) => toolMessages(b).map((m) => m.content));
    expect(new Set(results)).toEqual(
      new Set([
        "Error [refused]: write_file refused: the deny rule write_file(migrations/**) forbids it. Do not retry it; do the task another way or say what is needed.",
      ]),
    );
  });

  it("an ask rule asks under auto; an allow rule lets ask mode through", async () => {
    const asked = await runMode({ approval: "auto", askRules: ["write_file(*.txt)"] });
    expect([asked.wrote, asked.ran]).toEqual([false, true]);
    expect(asked.results[0]).toContain("(the ask rule write_file(*.txt))");
    const allowed = await runMode({ approval: "ask", allowRules: ["run_command(touch *)"] });
    expect([allowed.wrote, allowed.ran]).toEqual([false, true]);
  });

  it("a project's settings add deny rules to the user's and may not widen the approval", async () => {
    const ws = tempWorkspace();
    mkdirSync(path.join(ws, ".keel"));
    writeFileSync(
      path.join(ws, ".keel/settings.json"),
      JSON.stringify({ denyRules: ["write_file(a.txt)"] }),
    );
    const r = await runMode({}, ws);
    expect([r.wrote, r.ran]).toEqual([false, true]);
    // refused, each named once: the person's ask mode holds
    const ws2 = tempWorkspace();
    mkdirSync(path.join(ws2, ".keel"));
    writeFileSync(
      path.join(ws2, ".keel/settings.json"),
      JSON.stringify({ approval: "auto", allowRules: ["write_file(*)"] }),
    );
    const said = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    try {
      const widened = await runMode({ approval: "ask" }, ws2);
      expect([widened.wrote, widened.ran]).toEqual([false, false]);
      expect(said.mock.calls.map((c) => String(c[0]))).toEqual([
        expect.stringMatching(/settings\.json, field "approval": refused — only you may set it/),
        expect.stringMatching(/settings\.json, field "allowRules": refused — only you may set it/),
      ]);
    } finally {
      said.mockRestore();
    }
  });
});

describe("approval by a person", () => {
  it("ask mode pauses at an interrupt naming the change; the answer resumes it", async () => {
    const fake = await startFake({ script });
    const ws = tempWorkspace();
    const checkpointer = new MemorySaver();
    const context = { approval: "ask" as const, interactive: true, runCommandsUnsandboxed: true };
    const first = await runCoder(fake, "Create a.txt and run the build", {
      workspace: ws,
      checkpointer,
      context,
    });
    const pending = first.snapshot.tasks.flatMap((t) => t.interrupts);
    expect(pending[0]?.value).toMatchObject({
      type: "approval",
      tool: "write_file",
      question: "Allow `write_file a.txt`? (approval mode ask)",
    });
    expect(existsSync(path.join(ws, "a.txt"))).toBe(false);
    const second = await runCoder(fake, null, {
      workspace: ws,
      checkpointer,
      context,
      threadId: first.threadId,
      resume: "yes",
    });
    expect(existsSync(path.join(ws, "a.txt"))).toBe(true);
    // the command asks next; "no" refuses it and the run ends
    const third = await runCoder(fake, null, {
      workspace: ws,
      checkpointer,
      context,
      threadId: second.threadId,
      resume: "no",
    });
    expect(existsSync(path.join(ws, "ran.txt"))).toBe(false);
    expect(third.state.status).toBe("done");
  });
});

describe("one gate", () => {
  it("a command beyond the workspace is asked at the gate, before its undo snapshot or journal", async () => {
    const command = "curl --version > /dev/null; echo ran > ran.txt";
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0 ? calls(call("run_command", { command })) : { content: "Ran it." },
      ),
    });
    const ws = tempWorkspace();
    const checkpointer = new MemorySaver();
    const context = { approval: "auto" as const, interactive: true, runCommandsUnsandboxed: true };
    const first = await runCoder(fake, "Run the curl check", {
      workspace: ws,
      checkpointer,
      context,
    });
    const asked = first.snapshot.tasks.flatMap((t) => t.interrupts);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.value).toMatchObject({ type: "approval", tool: "run_command", command });
    expect((asked[0]?.value as { reason: string }).reason).toMatch(
      /curl acts beyond the workspace/,
    );
    // nothing of the call happened before the question: no snapshot of the workspace, no journal
    expect(existsSync(workspaceState(ws).undo)).toBe(false);
    expect(existsSync(path.join(ws, "ran.txt"))).toBe(false);
    const second = await runCoder(fake, null, {
      workspace: ws,
      checkpointer,
      context,
      threadId: first.threadId,
      resume: "yes",
    });
    expect(second.state.status).toBe("done");
    expect(readFileSync(path.join(ws, "ran.txt"), "utf8")).toBe("ran\n");
    // the step is recorded once, around the run the person allowed
    const steps = readFileSync(workspaceState(ws).journal, "utf8").trim().split("\n");
    expect(steps.map((l) => (JSON.parse(l) as { label: string }).label)).toEqual([
      `run_command ${command}`,
    ]);
  });
});

describe("the check after an edit", () => {
  it("appends the check command's verdict and output to the change's result", async () => {
    const fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0)
          return calls(call("write_file", { path: "bad.js", content: "function (\n" }));
        return { content: "Done." };
      }),
    });
    const ws = tempWorkspace();
    const run = await runCoder(fake, "Create bad.js", {
      workspace: ws,
      context: { runCommandsUnsandboxed: true, checkCommand: "node --check {file}" },
    });
    // done, and the outcome says the last change failed its check
    expect(outcome(run.state, run.threadId, "done").warnings).toEqual([
      "the check after the last change (bad.js) failed; the change stands",
    ]);
    const result = toolMessages(fake.chatBodies({ turnsOnly: true })[1])[0]!.content;
    expect(result).toMatch(
      /^created bad\.js \(11 bytes\)\n\ncheck `node --check bad.js` FAILED; the change was made, fix what it reports:\nexit code 1\n/,
    );
    expect(result).toContain("SyntaxError");
  });
});
