/**
 * Crash and resume: a real `keel run` child process is SIGKILLed mid-run, then the same command
 * with the same --thread finishes the task from the SQLite checkpoint, without re-running any tool
 * call that already had its answer (effects.log counts every side effect).
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ChatView, FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { runKeel, whenExists } from "../support/cli.js";
import {
  call,
  calls,
  keelScript,
  fakeOllamaPerTest,
  SLOW_COMMAND,
  slowStep,
  tempWorkspace,
  toolMessages,
} from "../support/harness.js";
import { STOPPED_WITH_KEEL } from "../../src/tools/run-command.js";

const STEPS = 4;

/** Each turn: one command with a side effect and one file; decided from the conversation alone. */
const script = keelScript((req: ChatView) => {
  const t = req.turn;
  if (t < STEPS) {
    return calls(
      call("run_command", {
        command: `node -e "require('fs').appendFileSync('effects.log', 'step${t}\\n')"`,
      }),
      call("write_file", { path: `part${t}.txt`, content: `part ${t}\n` }),
    );
  }
  return { content: `Wrote ${STEPS} parts.` };
});

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

describe("resume after SIGKILL", () => {
  it.each([1, 2, 3, 4])(
    "killed at model turn %i, resumed, finishes with every side effect exactly once",
    async (killAt) => {
      fake = await startFake({ script });
      const ws = tempWorkspace();
      const args = [
        "run",
        "Create the parts",
        "-w",
        ws,
        "--ollama-url",
        fake.url,
        "--thread",
        "crash",
        "--json",
      ];
      const first = await runKeel(args, {
        onSpawn: (child) =>
          fake!.onChat((req) => {
            if (!req.structured && req.turn === killAt) {
              fake!.inject({ fault: "hang" }); // no answer reaches the dying process
              child.kill("SIGKILL");
            }
          }),
      });
      expect(first.signal).toBe("SIGKILL");
      fake.onChat(undefined);
      const before = readFileSync(path.join(ws, "effects.log"), "utf8");
      expect(before.trim().split("\n")).toHaveLength(killAt);

      const second = await runKeel(args);
      expect(second.code).toBe(0);
      expect(second.stderr).toContain("resuming thread crash at act");
      expect(second.json).toMatchObject({
        status: "done",
        thread_id: "crash",
        files_written: expect.arrayContaining([`part${STEPS - 1}.txt`]),
      });
      expect(readFileSync(path.join(ws, "effects.log"), "utf8")).toBe(
        Array.from({ length: STEPS }, (_, i) => `step${i}\n`).join(""),
      );
      expect(
        readdirSync(ws)
          .filter((f) => f.startsWith("part"))
          .sort(),
      ).toEqual(Array.from({ length: STEPS }, (_, i) => `part${i}.txt`));
      expect((second.json?.tool_calls as unknown[]).length).toBe(STEPS * 2);
    },
  );

  it("a finished thread takes a follow-up request on the same thread", async () => {
    fake = await startFake({ script });
    const ws = tempWorkspace();
    const first = await runKeel([
      "run",
      "Create the parts",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--thread",
      "t",
      "--json",
    ]);
    expect(first.code).toBe(0);
    fake.setScript(keelScript(() => ({ content: "There are four parts." })));
    const second = await runKeel([
      "run",
      "How many parts are there?",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--thread",
      "t",
      "--json",
    ]);
    expect(second.json).toMatchObject({ status: "done", intent: "chat", turns: 1, tool_calls: [] });
    const last = fake.chatBodies({ turnsOnly: true }).at(-1)!;
    expect(last.messages!.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "Create the parts",
      expect.stringMatching(/^\[keel\] The plan for this request:\n1\. /),
      "How many parts are there?",
    ]);
  });
});

describe("one thread, one keel at a time", () => {
  it("a second keel on a running thread is refused, naming it; the first finishes with every side effect once", async () => {
    fake = await startFake({ script: slowStep });
    const ws = tempWorkspace();
    const log = path.join(ws, "effects.log");
    const args = ["run", "Run the slow step", "-w", ws, "--ollama-url", fake.url, "-t", "busy"];
    let second: Promise<Awaited<ReturnType<typeof runKeel>>> | undefined;
    const first = await runKeel([...args, "--json"], {
      onSpawn: whenExists(log, () => {
        second = runKeel(args);
      }),
    });
    const refused = await second!;
    expect(refused.code, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/^keel: thread busy is running in another keel \(pid \d+/m);
    expect(first.json).toMatchObject({ status: "done" });
    expect(readFileSync(log, "utf8")).toBe("start\nend\n");
    // the thread is free again once its keel has ended
    fake.setScript(keelScript(() => ({ content: "It ran once." })));
    const after = await runKeel(["run", "Did it run?", ...args.slice(2), "--json"]);
    expect(after.json).toMatchObject({ status: "done" });
  });

  it("keel undo on a running thread is refused, and changes nothing", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("write_file", { path: "a.txt", content: "a\n" }))
          : req.turn === 1
            ? calls(call("run_command", { command: SLOW_COMMAND }))
            : { content: "Done." },
      ),
    });
    const ws = tempWorkspace();
    const log = path.join(ws, "effects.log");
    let undo: Promise<Awaited<ReturnType<typeof runKeel>>> | undefined;
    const first = await runKeel(
      ["run", "Create a.txt, then run the slow step", "-w", ws, "--ollama-url", fake.url],
      {
        onSpawn: whenExists(log, () => {
          undo = runKeel(["undo", "-w", ws, "--yes"]);
        }),
      },
    );
    const refused = await undo!;
    expect(refused.code, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/^keel: thread \S+ is running in another keel/m);
    expect(first.code).toBe(0);
    expect(readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("a\n");
  });
});

describe("Ctrl-C", () => {
  it("SIGINT stops the run with exit 130, and the thread resumes to done", async () => {
    fake = await startFake({ script });
    const ws = tempWorkspace();
    const args = [
      "run",
      "Create the parts",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--thread",
      "ctrlc",
      "--json",
    ];
    const first = await runKeel(args, {
      onSpawn: (child) =>
        fake!.onChat((req) => {
          if (!req.structured && req.turn === 2) child.kill("SIGINT");
        }),
    });
    fake.onChat(undefined);
    expect(first.code).toBe(130);
    // not the agent's giving up: a script can tell the two apart
    expect(first.json).toMatchObject({ status: "interrupted", thread_id: "ctrlc" });
    expect(String(first.json?.summary)).toContain("keel run --thread ctrlc");
    const second = await runKeel(args);
    expect(second.json).toMatchObject({ status: "done" });
    expect(readFileSync(path.join(ws, "effects.log"), "utf8")).toBe("step0\nstep1\nstep2\nstep3\n");
  });

  it("the report for people says INTERRUPTED and gives the one command that resumes", async () => {
    fake = await startFake({ script });
    const ws = tempWorkspace();
    const first = await runKeel(
      ["run", "Create the parts", "-w", ws, "--ollama-url", fake.url, "--thread", "ctrlc"],
      {
        onSpawn: (child) =>
          fake!.onChat((req) => {
            if (!req.structured && req.turn === 1) child.kill("SIGINT");
          }),
      },
    );
    fake.onChat(undefined);
    expect(first.code).toBe(130);
    expect(first.stdout).toMatch(/^INTERRUPTED {2}thread ctrlc/m);
    expect(first.stdout).not.toContain("GAVE_UP");
    expect(first.stderr).toContain("the thread is checkpointed and resumes with the same command");
    // A request given to a thread with unfinished work is ignored: no hint offers one.
    expect(first.stdout.match(/keel run --thread ctrlc.*$/gm)).toEqual([
      `keel run --thread ctrlc -w ${ws} --ollama-url ${fake.url}`,
    ]);
  });

  it("with --checkpoints memory, Ctrl-C does not promise a resume it cannot keep", async () => {
    fake = await startFake({ script });
    const ws = tempWorkspace();
    const args = ["run", "Create the parts", "-w", ws, "--ollama-url", fake.url];
    const first = await runKeel([...args, "--checkpoints", "memory"], {
      onSpawn: (child) =>
        fake!.onChat((req) => {
          if (!req.structured && req.turn === 1) child.kill("SIGINT");
        }),
    });
    fake.onChat(undefined);
    expect(first.code).toBe(130);
    expect(first.stderr).toContain("--checkpoints memory keeps nothing to resume");
    expect(first.stderr).not.toContain("resumes with the same command");
  });

  it("a reader that goes away (keel run … | head) stops the run at once: no stack trace, exit 141, resumable", async () => {
    fake = await startFake({ script: slowStep });
    const ws = tempWorkspace();
    const log = path.join(ws, "effects.log");
    const args = ["run", "Run the slow step", "-w", ws, "--ollama-url", fake.url, "-t", "pipe"];
    const first = await runKeel(args, {
      onSpawn: whenExists(log, (child) => {
        child.stdout!.destroy(); // as `head` exits: keel's next write finds the pipe closed
      }),
    });
    expect(first.signal).toBeNull();
    expect(first.code).toBe(141);
    expect(first.stderr).not.toMatch(/EPIPE|Unhandled|unexpected failure/);
    const second = await runKeel([...args, "--json"]);
    expect(second.json).toMatchObject({ status: "done", summary: "Ran it." });
    // keel noticed the closed pipe at its next line, after the command: it ran once
    expect(readFileSync(log, "utf8")).toBe("start\nend\n");
  });

  it.each([[["--help"]], [["eval", "--help"]]])(
    "keel %j | head: exit 141 without a stack trace",
    async (args) => {
      const r = await runKeel(args, { onSpawn: (child) => child.stdout!.destroy() });
      expect(r.code).toBe(141);
      expect(r.stderr).toBe("");
    },
  );

  it.each([
    ["SIGTERM", 143, ["SIGTERM"]],
    ["Ctrl-C twice", 130, ["SIGINT", "SIGINT"]],
  ] as const)(
    "a model request the server never answers does not hold a run stopped with %s: it exits %i",
    async (_, code, signals) => {
      fake = await startFake({ script });
      const ws = tempWorkspace();
      const args = ["run", "Create the parts", "-w", ws, "--ollama-url", fake.url, "--json"];
      const stopped = await runKeel([...args, "--thread", "hung"], {
        onSpawn: (child) =>
          fake!.onChat((req) => {
            if (req.structured) return;
            fake!.inject({ fault: "hang" }); // the request is taken and never answered
            signals.forEach((s, i) => setTimeout(() => child.kill(s), 300 * (i + 1)));
          }),
      });
      fake.onChat(undefined);
      // without the stop reaching the request, keel waited out its five-minute request timeout
      expect(stopped.signal).toBeNull();
      expect(stopped.code).toBe(code);
      expect(stopped.json).toMatchObject({ status: "interrupted", thread_id: "hung" });
    },
  );

  it("SIGTERM stops at once: the command in flight is stopped, the outcome printed, exit 143, and the thread resumes", async () => {
    fake = await startFake({ script: slowStep });
    const ws = tempWorkspace();
    const log = path.join(ws, "effects.log");
    const args = ["run", "Run the slow step", "-w", ws, "--ollama-url", fake.url];
    const first = await runKeel([...args, "--thread", "term", "--json"], {
      onSpawn: whenExists(log, (child) => {
        child.kill("SIGTERM");
      }),
    });
    expect(first.signal).toBeNull();
    expect(first.code).toBe(143);
    expect(first.stderr).toContain("SIGTERM");
    expect(first.json).toMatchObject({ thread_id: "term" });
    expect(String(first.json?.summary)).toContain("keel run --thread term");
    await new Promise((r) => setTimeout(r, 3500));
    expect(readFileSync(log, "utf8")).toBe("start\n"); // the command did not outlive keel
    const asked = fake.chatBodies().length;
    const second = await runKeel([...args, "--thread", "term", "--json"]);
    expect(second.json).toMatchObject({ status: "done", summary: "Ran it." });
    // the model is told the user stopped it, not that keel crashed, and it was not run again
    const told = toolMessages(fake.chatBodies()[asked]).at(-1)!;
    expect(told.content).toContain(STOPPED_WITH_KEEL);
    expect(readFileSync(log, "utf8")).toBe("start\n");
  });
});
