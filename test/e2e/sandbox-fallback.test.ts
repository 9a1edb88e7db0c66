/**
 * A machine where the OS cannot sandbox (here: bubblewrap missing from PATH). keel says so once at
 * the start, refuses commands when nobody can approve them (even under --yes), asks a person when one
 * is there, and runs them unsandboxed only under the flag that says so. Never a silent downgrade.
 */
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { beforeAll, describe, expect, it } from "vitest";
import { runKeel } from "../support/cli.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  lastResult,
  runCoder,
  tempWorkspace,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();
/** A PATH with the programs the tests use and without bwrap, socat and rg. */
let bin: string;

beforeAll(() => {
  bin = path.join(tempWorkspace("keel-nobwrap-"), "bin");
  mkdirSync(bin);
  for (const p of ["bash", "sh", "touch", "cat", "ls", "env"]) {
    symlinkSync(`/usr/bin/${p}`, path.join(bin, p));
  }
  symlinkSync(process.execPath, path.join(bin, "node"));
  // This file's own process probes the sandbox with this PATH too (the graph test below).
  process.env.PATH = bin;
});

const touchScript = keelScript((req) =>
  req.turn === 0
    ? calls(call("run_command", { command: "touch ran.txt" }))
    : { content: `Result: ${lastResult(req).slice(0, 200)}` },
);

const run = (ws: string, url: string, ...flags: string[]) =>
  runKeel(
    ["run", "Create ran.txt", "-w", ws, "--ollama-url", url, "--checkpoints", "memory", ...flags],
    { env: { PATH: bin } },
  );

describe("without an OS sandbox", () => {
  it("keel doctor says what is missing and how to install it (exit 1)", async () => {
    const r = await runKeel(["doctor", "--ollama-url", "http://127.0.0.1:9"], {
      env: { PATH: bin },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/sandbox\s+no\s+.*bubblewrap/);
    expect(r.stdout).toContain("apt-get install bubblewrap socat ripgrep");
  });

  it("says so once at the start, and refuses commands without a person, even with --yes", async () => {
    const fake = await startFake({ script: touchScript });
    const ws = tempWorkspace();
    const r = await run(ws, fake.url, "--yes", "--json");
    expect(existsSync(path.join(ws, "ran.txt"))).toBe(false);
    expect(r.stderr.match(/⚠ keel cannot sandbox commands on this machine/g)).toHaveLength(1);
    expect(r.stderr).toContain("--run-commands-unsandboxed");
    const told = fake.chatBodies({ turnsOnly: true })[1]!.messages!.find((m) => m.role === "tool")!;
    expect(told.content).toMatch(
      /needs_approval.*keel cannot sandbox commands on this machine.*--run-commands-unsandboxed/s,
    );
  });

  it("--run-commands-unsandboxed runs the command, and the start of the run says so", async () => {
    const fake = await startFake({ script: touchScript });
    const ws = tempWorkspace();
    const r = await run(ws, fake.url, "--run-commands-unsandboxed");
    expect(existsSync(path.join(ws, "ran.txt"))).toBe(true);
    expect(r.stdout).toMatch(/commands run WITHOUT the OS sandbox \(--run-commands-unsandboxed\)/);
  });

  it("interactive: asks a person before each command, even when --yes approves installs", async () => {
    const fake = await startFake({ script: touchScript });
    const ws = tempWorkspace();
    const checkpointer = new MemorySaver();
    const first = await runCoder(fake, "Create ran.txt", {
      workspace: ws,
      checkpointer,
      context: { interactive: true, autoApprove: true },
    });
    const pending = first.snapshot.tasks.flatMap((t) => t.interrupts);
    expect(pending[0]?.value).toMatchObject({
      type: "approval",
      command: "touch ran.txt",
      unsandboxed: true,
    });
    expect(existsSync(path.join(ws, "ran.txt"))).toBe(false);
    await runCoder(fake, null, {
      workspace: ws,
      checkpointer,
      threadId: first.threadId,
      resume: "yes",
      context: { interactive: true, autoApprove: true },
    });
    expect(existsSync(path.join(ws, "ran.txt"))).toBe(true);
  });
});
