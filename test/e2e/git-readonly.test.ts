/**
 * `.git` is read-only to commands, through the real CLI against the fake Ollama: a model's
 * `git commit` in a run without a person is refused with what to do instead (name the command in
 * the answer), `--yes` notwithstanding; a person who approves it (at the CLI's prompt, on a
 * terminal) gets the commit; `git status` and `git log` just work, with no error about the lock
 * git could not take.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type { FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { KEEL_BIN, runKeel } from "../support/cli.js";
import { git } from "../support/git.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  lastResult,
  tempWorkspace,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();

/** A repository with one commit of notes.txt, and notes.txt changed since. */
function repository(): string {
  const w = path.join(tempWorkspace("keel-gitro-"), "ws");
  mkdirSync(w);
  writeFileSync(path.join(w, "notes.txt"), "one\n");
  git(w, "init", "-q", "-b", "main");
  git(w, "add", "-A");
  git(w, "commit", "-qm", "first");
  writeFileSync(path.join(w, "notes.txt"), "one\ntwo\n");
  return w;
}

/** The model runs each command in turn, then says what the last one answered. */
const running = (...commands: string[]) =>
  keelScript((req) =>
    req.turn < commands.length
      ? calls(call("run_command", { command: commands[req.turn]! }))
      : { content: `Result: ${lastResult(req).slice(0, 600)}` },
  );

/** What each tool call was answered, in order, as the model was shown it. */
const toolResults = (fake: FakeOllama) => {
  const seen = fake
    .chatBodies({ turnsOnly: true })
    .map((b) => (b.messages ?? []).filter((m) => m.role === "tool").map((m) => m.content));
  return seen.reduce((a, b) => (b.length > a.length ? b : a), []);
};

const COMMIT = "git commit -am 'add two'";

const run = (w: string, url: string, ...flags: string[]) =>
  runKeel([
    "run",
    "Commit the change to notes.txt",
    "-w",
    w,
    "--ollama-url",
    url,
    "--checkpoints",
    "memory",
    ...flags,
  ]);

describe("git through the real CLI, .git read-only to commands", () => {
  it("a git commit without a person is refused, --yes or not, and the model is told what to say", async () => {
    const w = repository();
    const head = git(w, "rev-parse", "HEAD");
    const fake = await startFake({ script: running(COMMIT) });
    const r = await run(w, fake.url, "--yes", "--json");
    expect(r.json, r.stderr).toBeDefined();
    const [told] = toolResults(fake);
    expect(told).toMatch(
      /^Error \[needs_approval\]: run_command was not run: `git commit` writes the repository's \.git, which only a person who sees the command may allow, and none did \(--yes does not\)\. \.git is read-only to commands: do the rest of the task without it, and say in your answer which git command is needed \(`git commit -am add two`\)/,
    );
    expect(git(w, "rev-parse", "HEAD")).toBe(head);
    expect(git(w, "status", "--porcelain")).toBe(" M notes.txt\n");
  });

  it("git status and git log just work: their output, no error about a lock", async () => {
    const w = repository();
    const fake = await startFake({ script: running("git status", "git log --oneline -3") });
    const r = await run(w, fake.url, "--yes", "--json");
    expect(r.code, r.stderr).toBe(0);
    const [status, log] = toolResults(fake);
    expect(status).toMatch(/^exit code 0\nOn branch main\n.*modified: {3}notes\.txt/s);
    expect(log).toMatch(/^exit code 0\n[0-9a-f]{7} first$/);
    for (const text of [status, log]) expect(text).not.toMatch(/fatal|error|lock|\[sandbox\]/i);
  });

  it("a person who approves the git commit at the prompt gets it, run with .git writable", async () => {
    const w = repository();
    const fake = await startFake({ script: running(COMMIT) });
    // a terminal for keel's prompt: util-linux's script gives it one
    const args = ["run", "Commit the change", "-w", w, "--ollama-url", fake.url];
    const command = [process.execPath, KEEL_BIN, ...args].map((a) => `'${a}'`).join(" ");
    // the person's identity is in their global config, which the sandbox hides from the command
    const global = path.join(w, "..", "global.gitconfig");
    writeFileSync(global, "[user]\n\tname = Ann\n\temail = ann@example.com\n");
    const child = spawn("script", ["-qefc", command, "/dev/null"], {
      env: { ...process.env, NO_COLOR: "1", CI: "", GIT_CONFIG_GLOBAL: global },
      stdio: ["pipe", "pipe", "pipe"],
    });
    onTestFinished(() => void child.kill("SIGKILL"));
    let screen = "";
    let answered = false;
    child.stdout.on("data", (d: Buffer) => {
      screen += d.toString();
      if (!answered && screen.includes("> ")) {
        answered = true;
        child.stdin.write("y\r");
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(screen).toMatch(
      /Allow `git commit -am 'add two'`\? \(`git commit` writes the repository's \.git, which only a person who sees the command may allow\)/,
    );
    expect(code, screen).toBe(0);
    expect(git(w, "log", "--format=%s %an <%ae>")).toBe(
      "add two Ann <ann@example.com>\nfirst Ann <ann@example.com>\n",
    );
    expect(git(w, "diff", "HEAD")).toBe("");
    expect(toolResults(fake)[0]).toMatch(/^exit code 0\n/);
  });
});
