/**
 * Edits people trust, end to end through the keel command against the fake Ollama: the matching
 * cascade (wrong indentation applied and reported, an ambiguous edit refused with both places),
 * read-before-edit, and keel diff / keel undo with a file the user changed in between.
 */
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { UNDONE_NOTE } from "../../src/coder/rewind.js";
import { runKeel } from "../support/cli.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  lastResult,
  tempWorkspace,
  toolMessages,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();

const APP = [
  "class Cart:",
  "    def total(self, items):",
  "        s = 0",
  "        for i in items:",
  "            s += i.price",
  "        return s",
  "",
  "    def count(self, items):",
  "        return len(items)",
  "",
].join("\n");
const CONFIG = '{ "debug": false }\n';

describe("edits and undo through keel run", () => {
  it("applies a wrongly indented edit, refuses an unread file and an ambiguous edit, and undo puts it all back but the user's file", async () => {
    const ws = tempWorkspace();
    writeFileSync(path.join(ws, "app.py"), APP);
    writeFileSync(path.join(ws, "config.json"), CONFIG);
    const results: string[] = [];
    const fake = await startFake({
      script: keelScript(
        (req) => {
          if (req.turn > 0) results.push(lastResult(req));
          switch (req.turn) {
            case 0: // an edit before any read
              return calls(
                call("edit_file", { path: "app.py", old_text: "s = 0", new_text: "s = 0.0" }),
              );
            case 1:
              return calls(call("read_file", { path: "app.py" }));
            case 2: // the method copied flush left, body at 2 spaces
              return calls(
                call("edit_file", {
                  path: "app.py",
                  old_text: "def total(self, items):\n  s = 0\n  for i in items:\n    s += i.price",
                  new_text:
                    "def total(self, items):\n  s = 0\n  for i in items:\n    if i.price > 0:\n      s += i.price",
                }),
              );
            case 3: // occurs twice
              return calls(
                call("edit_file", { path: "app.py", old_text: "items):", new_text: "xs):" }),
              );
            case 4:
              return calls(
                call("write_file", {
                  path: "lib/util.py",
                  content: "def helper():\n    return 1\n",
                }),
                call("write_file", { path: "config.json", content: '{ "debug": true }\n' }),
              );
            default:
              return { content: "Done: skipped non-positive prices, added lib/util.py." };
          }
        },
        { intent: "modify" },
      ),
    });
    const run = await runKeel([
      "run",
      "Skip items with no price in Cart.total",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--thread",
      "t-edit",
      "--json",
    ]);
    expect(run.code).toBe(0);

    expect(results[0]).toContain(
      "Error [refused]: edit_file: app.py has not been read in this conversation. Call read_file on app.py first",
    );
    expect(results[2]).toBe(
      "edited app.py at lines 2-5 (matched after normalising indentation; new_text was re-indented to the file's)",
    );
    expect(results[3]).toContain(
      "edit_file: old_text matches 2 places in app.py (line 2 and line 9, matching exactly). Include more surrounding lines",
    );
    const edited = readFileSync(path.join(ws, "app.py"), "utf8");
    expect(edited).toBe(
      APP.replace(
        "            s += i.price",
        "            if i.price > 0:\n                s += i.price",
      ),
    );

    // keel diff: the steps and a unified diff of the agent's changes
    const diff = await runKeel(["diff", "-w", ws]);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain("thread t-edit:");
    expect(diff.stdout).toMatch(/step 1\s+edit_file app.py/);
    expect(diff.stdout).toMatch(/step 2\s+write_file lib\/util.py/);
    expect(diff.stdout).toContain("+            if i.price > 0:");
    expect(diff.stdout).toContain("--- /dev/null\n+++ b/lib/util.py");
    const asJson = JSON.parse((await runKeel(["diff", "-w", ws, "--json"])).stdout) as {
      thread: string;
      steps: Array<{ step: number; files: string[] }>;
      patch: string;
    };
    expect(asJson.thread).toBe("t-edit");
    expect(asJson.steps.map((s) => [s.step, s.files])).toEqual([
      [1, ["app.py"]],
      [2, ["lib/util.py"]],
      [3, ["config.json"]],
    ]);
    expect(asJson.patch).toContain("+            if i.price > 0:");

    // the user changes config.json after the agent did
    writeFileSync(path.join(ws, "config.json"), '{ "debug": true, "mine": 1 }\n');

    const preview = await runKeel(["undo", "-w", ws]);
    expect(preview.code).toBe(1); // no terminal and no --yes: shown, not applied
    expect(preview.stdout).toContain("run again with --yes");
    expect(readFileSync(path.join(ws, "app.py"), "utf8")).toBe(edited);
    // with --json, what would be done is stdout's JSON, applied or not
    const planned = {
      thread: "t-edit",
      steps: [1, 2, 3],
      restored: ["app.py"],
      removed: ["lib/util.py"],
      kept: ["config.json"],
      applied: false,
      rewound: false,
    };
    for (const more of [["--dry-run"], []]) {
      const r = await runKeel(["undo", "-w", ws, "--json", ...more]);
      expect(JSON.parse(r.stdout)).toEqual(planned);
    }
    expect(readFileSync(path.join(ws, "app.py"), "utf8")).toBe(edited);

    const undo = await runKeel(["undo", "-w", ws, "--yes"]);
    expect(undo.code).toBe(0);
    expect(undo.stdout).toContain("restore app.py (changed at step 1)");
    expect(undo.stdout).toContain("remove  lib/util.py (created at step 2)");
    expect(undo.stdout).toContain(
      "keep    config.json: changed since step 3 (not by the agent); left as it is",
    );
    expect(readFileSync(path.join(ws, "app.py"), "utf8")).toBe(APP);
    expect(existsSync(path.join(ws, "lib/util.py"))).toBe(false);
    expect(existsSync(path.join(ws, "lib"))).toBe(false);
    expect(readFileSync(path.join(ws, "config.json"), "utf8")).toBe(
      '{ "debug": true, "mine": 1 }\n',
    );
    // from keel's folder, the workspace is part of the command that continues the thread, and so
    // is the server the run was given (a bare `keel run --thread` would reach another one)
    expect(undo.stdout).toMatch(
      new RegExp(`continue with: keel run --thread t-edit -w ${ws} --ollama-url ${fake.url}$`, "m"),
    );

    // the stats say the run was undone and waits, not that it is running
    const stats = JSON.parse((await runKeel(["stats", "-w", ws, "--json"])).stdout) as {
      models: Array<{ outcomes: Record<string, number> }>;
    };
    expect(stats.models.map((m) => m.outcomes)).toEqual([{ undone: 1 }]);

    // nothing left to undo: asked again, the undo is done (exit 0), and the diff is empty
    const again = await runKeel(["undo", "-w", ws, "--yes"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      "nothing to undo: thread t-edit has no file changes left in " +
        `${ws}: all of them were undone`,
    );
    const againJson = await runKeel(["undo", "-w", ws, "--yes", "--json"]);
    expect(againJson.code).toBe(0);
    expect(JSON.parse(againJson.stdout)).toEqual({
      thread: "t-edit",
      steps: [],
      restored: [],
      removed: [],
      kept: [],
      applied: false,
      rewound: false,
    });
    const empty = await runKeel(["diff", "-w", ws]);
    expect(empty.code).toBe(0);
    expect(empty.stdout).toContain("thread t-edit has no file changes left in");
    expect(empty.stdout).not.toContain("to undo");
    expect(JSON.parse((await runKeel(["diff", "-w", ws, "--json"])).stdout)).toMatchObject({
      steps: [],
      patch: "",
    });
    // a thread keel changed no files for (a mistyped id): the threads that did are named
    const typo = await runKeel(["diff", "-w", ws, "-t", "t-edt"]);
    expect(typo.code).toBe(0);
    expect(typo.stdout).toContain("thread t-edt changed no files");
    expect(typo.stdout).toContain("threads that did, newest first: t-edit");

    // resuming continues from before the undone step, the model told what was undone
    const before = fake.chatBodies().length;
    const resumed = await runKeel([
      "run",
      "--thread",
      "t-edit",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--json",
    ]);
    expect(resumed.code).toBe(0);
    const next = fake.chatBodies()[before]!;
    const undone = toolMessages(next).filter((m) => m.content === UNDONE_NOTE);
    expect(undone).toHaveLength(1);
    // the conversation is the one before the edit: the read is there, the undone edit's result is not
    expect(JSON.stringify(next.messages)).not.toContain("edited app.py");
  });
});
