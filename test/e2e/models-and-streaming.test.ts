/** `keel models`, and the live timeline in prompt mode: prose streams, raw call markup never shows. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { runKeel } from "../support/cli.js";
import { keelScript, fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

describe("keel models", () => {
  it("shows each model's tool mode and text format", async () => {
    fake = await startFake();
    const table = await runKeel(["models", "--ollama-url", fake.url]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /qwen3:8b\s+qwen3\s+40960\s+completion,tools,thinking\s+native\s+hermes/,
    );
    expect(table.stdout).toMatch(
      /gemma3:4b\s+gemma3\s+131072\s+completion,vision\s+prompt\s+hermes/,
    );
    const json = await runKeel(["models", "--ollama-url", fake.url, "--json"]);
    const rows = JSON.parse(json.stdout) as Array<{
      model: string;
      toolMode: string;
      format: string;
    }>;
    expect(rows.find((r) => r.model === "llama3.1:8b")).toMatchObject({
      toolMode: "native",
      format: "llama3-json",
    });
    expect(fake.requests.filter((r) => r.path === "/api/show")).toHaveLength(8);
  });

  it("exits 3 when the server is down", async () => {
    const r = await runKeel(["models", "--ollama-url", "http://127.0.0.1:9"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("ollama serve");
  });
});

describe("streaming timeline", () => {
  it("streams the prose of a prompt-mode reply and hides the call markup", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? {
              pieces: 12,
              content:
                'Creating the file now.\n<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "A"}}\n</tool_call>',
            }
          : { pieces: 5, content: "All done: a.txt holds A." },
      ),
    });
    const ws = tempWorkspace();
    const r = await runKeel([
      "run",
      "Create a.txt containing A",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "-m",
      "gemma3:4b",
      "--checkpoints",
      "memory",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("│ Creating the file now.");
    expect(r.stdout).toContain(
      "channel  prompt mode: tools described in the system prompt, calls read as hermes",
    );
    expect(r.stdout).toMatch(/act\s+turn 1 → write_file\(path="a.txt", content="A"\)/);
    expect(r.stdout).not.toContain("<tool_call>");
    expect(r.stdout).not.toContain('"arguments"');
    expect(readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("A");
    // the final answer streamed in full is not printed again in the report
    expect(r.stdout.split("All done: a.txt holds A.").length - 1).toBe(1);
    expect(r.stdout).toMatch(/DONE[^\n]*\n(.*\n)*\(the answer is above\)/);
  });
});

describe("package entry", () => {
  it("exports parseToolCalls under the package's tool-calls entry", async () => {
    const { execFileSync } = await import("node:child_process");
    const out = execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'import { parseToolCalls } from \'keel-agent/tool-calls\'; console.log(JSON.stringify(parseToolCalls(\'<tool_call>{"name":"f","arguments":{"a":1}}</tool_call> ok\')))',
      ],
      { cwd: path.resolve(import.meta.dirname, "../.."), encoding: "utf8" },
    );
    expect(JSON.parse(out)).toEqual({
      calls: [{ name: "f", arguments: { a: 1 } }],
      content: "ok",
      format: "hermes",
    });
  });
});
