/**
 * Work that always ends (issue 45), through the keel command with a scripted model: a grep or glob
 * pattern built to backtrack for ever is answered; Ctrl-C during a long grep stops keel at once,
 * resumable; a call past its deadline is stopped and the model is told; a server that ignores the
 * generation budget and sends 6,000 text calls gets the first 64 run and the model told of the rest.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ChatView } from "../../src/testing/fake-ollama/index.js";
import { runKeel } from "../support/cli.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  tempWorkspace,
  toolMessages,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();

/** The model makes one call, then answers with what the call returned. */
const oneCall = (name: string, args: Record<string, unknown>) =>
  keelScript(
    (req: ChatView) =>
      req.turn === 0
        ? calls(call(name, args))
        : { content: `Done: ${req.toolResults.at(-1)?.content.slice(0, 200) ?? ""}` },
    { intent: "analyze" },
  );

describe("patterns built to backtrack for ever are answered", () => {
  it.each([
    ["grep", { pattern: "^(a+)+$" }, "no matches for /^(a+)+$/ in ."],
    ["glob", { pattern: `${"*a".repeat(20)}*b` }, "no files match"],
  ])(
    "%s: the model gets its answer and the run ends",
    async (tool, args, answer) => {
      const fake = await startFake({ script: oneCall(tool, args) });
      const ws = tempWorkspace();
      writeFileSync(path.join(ws, "a.txt"), `${"a".repeat(40)}!\n`);
      writeFileSync(path.join(ws, `${"a".repeat(199)}.txt`), "x\n");
      const r = await runKeel(["run", "Look for it", "-w", ws, "--ollama-url", fake.url, "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ status: "done" });
      const told = toolMessages(fake.chatBodies({ turnsOnly: true }).at(-1)).at(-1);
      expect(told?.content).toContain(answer);
    },
    40_000,
  );
});

/** A lookbehind keeps RE2 on its slowest linear path: over a megabyte, tens of seconds. */
const SLOW = "(?<=a)(?:[a-e][a-e]?){400}[f-z]";

describe("a long grep", () => {
  it("Ctrl-C stops keel at once (exit 130, resumable); resumed, the grep is stopped at its deadline and the model is told", async () => {
    const fake = await startFake({ script: oneCall("grep", { pattern: SLOW, path: "big.txt" }) });
    const ws = tempWorkspace();
    writeFileSync(path.join(ws, "big.txt"), `${"abcde".repeat(40)}\n`.repeat(10_000));
    const home = tempWorkspace("keel-home-");
    const env = { HOME: home, XDG_CONFIG_HOME: "" };
    const args = ["run", "Look for it", "-w", ws, "--ollama-url", fake.url, "--thread", "slow"];
    const stopped = await runKeel([...args, "--json"], {
      env,
      onSpawn: (child) =>
        fake.onChat((req) => {
          if (req.structured || req.turn !== 0) return;
          // the grep starts as soon as this reply is read; both presses land while it runs
          setTimeout(() => child.kill("SIGINT"), 1500);
          setTimeout(() => child.kill("SIGINT"), 2500);
        }),
    });
    fake.onChat(undefined);
    expect(stopped.signal).toBeNull();
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr).toContain("stopping now");
    expect(stopped.json).toMatchObject({ status: "interrupted", thread_id: "slow" });
    // the grep had no answer: the model was asked nothing after it
    expect(fake.chatBodies({ turnsOnly: true })).toHaveLength(1);

    mkdirSync(path.join(home, ".config/keel"), { recursive: true });
    writeFileSync(
      path.join(home, ".config/keel/settings.json"),
      JSON.stringify({ toolTimeoutMs: 1500 }),
    );
    const resumed = await runKeel([...args, "--json"], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.json).toMatchObject({ status: "done" });
    const told = toolMessages(fake.chatBodies({ turnsOnly: true }).at(-1)).at(-1);
    expect(told?.content).toMatch(
      /^Error \[timeout\]: grep was stopped: it ran past its time limit \(1\.5 s\)/,
    );
  }, 60_000);
});

describe("a reply with thousands of calls", () => {
  it("a server that ignores the budget sends 6,000 text calls: 64 run, the model is told of the other 5,936, the run ends", async () => {
    const text = Array.from(
      { length: 6000 },
      (_, i) => `<tool_call>{"name":"read_file","arguments":{"path":"f${i}"}}</tool_call>`,
    ).join("\n");
    expect(text.length).toBeGreaterThan(300_000);
    const fake = await startFake({
      script: keelScript(
        (req) =>
          req.turn === 0
            ? { content: text, pieces: 50, ignoreBudget: true }
            : { content: "Read what there was." },
        { intent: "analyze" },
      ),
    });
    const ws = tempWorkspace();
    const r = await runKeel([
      "run",
      "Read the files",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ status: "done" });
    const next = fake.chatBodies({ turnsOnly: true })[1]!;
    const results = toolMessages(next);
    // the first 64 calls ran, in order, and none after them
    expect(results).toHaveLength(64);
    expect(results.map((m) => /read_file: f(\d+) does not exist/.exec(m.content)?.[1])).toEqual(
      Array.from({ length: 64 }, (_, i) => String(i)),
    );
    expect(results[0]!.content).toContain(
      "keel did not run 5936 other entries of your tool-call list",
    );
    expect(results[0]!.content).toContain(
      "keel runs at most 64 tool calls per reply; the reply had 6000",
    );
  }, 60_000);
});
