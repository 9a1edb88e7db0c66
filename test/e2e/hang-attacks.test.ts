/**
 * Work that always ends (issue 45), through the keel command with a scripted model: a grep or glob
 * pattern built to backtrack for ever is answered; Ctrl-C during a long grep stops keel at once,
 * resumable; a call past its deadline is stopped and the model is told.
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
