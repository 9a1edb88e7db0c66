/**
 * Fault injection through the fake server, end to end: each fault ends done, or with exit code 3
 * and a message — never a hang, never a lost checkpoint — and a rerun on the same thread finishes.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { FakeOllama, Reply } from "../../src/testing/fake-ollama/index.js";
import { runKeel } from "../support/cli.js";
import { call, calls, keelScript, fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

const build = keelScript((req) => {
  if (req.turn < 3)
    return calls(call("write_file", { path: `f${req.turn}.txt`, content: `file ${req.turn}` }));
  return { content: "Wrote three files." };
});

/** Injects `fault` for the model turn `turn` (once, or `times` times in a row). */
function faultAt(f: FakeOllama, turn: number, fault: Reply, times = 1) {
  let left = times;
  f.onChat((req) => {
    if (!req.structured && req.turn === turn && left > 0) {
      left--;
      f.inject(fault);
    }
  });
}

const run = (ws: string, url: string, extra: string[] = []) =>
  runKeel([
    "run",
    "Create the three files",
    "-w",
    ws,
    "--ollama-url",
    url,
    "--thread",
    "f",
    "--retries",
    "2",
    "--json",
    ...extra,
  ]);

describe("faults end to end", () => {
  it.each<[string, Reply, number]>([
    [
      "a burst of 503s",
      {
        fault: "status",
        status: 503,
        error: "server busy, please try again.  maximum pending requests exceeded",
      },
      2,
    ],
    ["a connection reset before the response", { fault: "reset-before" }, 1],
    ["a stream cut mid-way", { fault: "cut-mid-stream" }, 2],
    ["a stream without its final line", { fault: "no-done" }, 1],
    [
      "a malformed NDJSON line",
      {
        fault: "malformed-line",
        then: calls(call("write_file", { path: "f1.txt", content: "file 1" })),
      },
      1,
    ],
  ])("%s is absorbed: done", async (_name, fault, times) => {
    fake = await startFake({ script: build });
    faultAt(fake, 1, fault, times);
    const ws = tempWorkspace();
    const r = await run(ws, fake.url);
    expect(r.json).toMatchObject({ status: "done", files_written: ["f0.txt", "f1.txt", "f2.txt"] });
    expect(readFileSync(path.join(ws, "f2.txt"), "utf8")).toBe("file 2");
  });

  it.each<[string, Reply, RegExp]>([
    [
      "a model that vanishes mid-run (404)",
      { fault: "status", status: 404, error: "model 'qwen3:8b' not found" },
      /has no model "qwen3:8b".*ollama pull qwen3:8b/,
    ],
    [
      "503s that outlast the retries",
      {
        fault: "status",
        status: 503,
        error: "server busy, please try again.  maximum pending requests exceeded",
      },
      /stayed busy \(after 3 attempts\)/,
    ],
    [
      "a runner crash mid-stream, every time",
      { fault: "stream-error", error: "model runner has unexpectedly stopped" },
      /failed \(after 3 attempts\): model runner has unexpectedly stopped/,
    ],
  ])(
    "%s: exit 3 with what to do; a rerun on the same thread finishes",
    async (_name, fault, message) => {
      fake = await startFake({ script: build });
      faultAt(fake, 2, fault, 10);
      const ws = tempWorkspace();
      const first = await run(ws, fake.url);
      expect(first.code).toBe(3);
      expect(String(first.json?.error)).toMatch(message);
      expect(first.json).toMatchObject({
        status: "error",
        thread_id: "f",
        files_written: ["f0.txt", "f1.txt"],
      });
      fake.onChat(undefined);
      const second = await runKeel([
        "run",
        "-w",
        ws,
        "--ollama-url",
        fake.url,
        "--thread",
        "f",
        "--json",
      ]);
      expect(second.code).toBe(0);
      expect(second.stderr).toContain("resuming thread f at act");
      expect(second.json).toMatchObject({
        status: "done",
        files_written: ["f0.txt", "f1.txt", "f2.txt"],
      });
    },
  );
});
