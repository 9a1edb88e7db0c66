/** Every script in examples/ runs against the fake Ollama server, importing keel by package name. */
import { execFile } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { analystScript } from "../../src/testing/script.js";
import {
  call,
  calls,
  keelScript,
  lastResult,
  fakeOllamaPerTest,
  tempWorkspace,
} from "../support/harness.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

const example = (name: string, args: string[]) =>
  run(process.execPath, [path.join(root, "examples", name), ...args], {
    cwd: root,
    env: { ...process.env, OLLAMA_HOST: fake!.url, NO_COLOR: "1" },
  });

const buildHello = keelScript((req) =>
  req.turn === 0
    ? calls(call("write_file", { path: "hello.py", content: 'print("hello")\n' }))
    : { content: "Created hello.py." },
);

describe("examples", () => {
  it("invoke.mjs builds and prints the outcome", async () => {
    fake = await startFake({ script: buildHello });
    const ws = tempWorkspace();
    const { stdout } = await example("invoke.mjs", [ws]);
    expect(stdout).toContain("status: done");
    expect(stdout).toContain("files written: hello.py");
    expect(readFileSync(path.join(ws, "hello.py"), "utf8")).toBe('print("hello")\n');
  });

  it("stream.mjs prints each node's update", async () => {
    fake = await startFake({ script: buildHello });
    const ws = tempWorkspace();
    const { stdout } = await example("stream.mjs", [ws]);
    expect(stdout).toMatch(/\[intent-classify\]/);
    expect(stdout).toMatch(/\[act\] write_file\(\{"path":"hello.py"/);
    expect(stdout).toMatch(/\[tool-execute\] success: created hello.py/);
    expect(stdout).toContain("status: done");
  });

  it("resume-interrupt.mjs pauses for approval and resumes with the answer", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("run_command", { command: "kill -0 $$ && touch approved.txt && echo ok" }))
          : { content: `Result: ${lastResult(req).slice(0, 20)}` },
      ),
    });
    const ws = tempWorkspace();
    const { stdout } = await example("resume-interrupt.mjs", [ws, "Run the check", "yes"]);
    expect(stdout).toMatch(/interrupted: Allow `kill -0 \$\$ && touch approved.txt && echo ok`\?/);
    expect(stdout).toContain("status: done");
    expect(existsSync(path.join(ws, "approved.txt"))).toBe(true);
  });

  it("analyze.mjs analyses a folder", async () => {
    fake = await startFake({ script: analystScript() });
    const dir = tempWorkspace();
    cpSync(path.join(root, "src/guard"), dir, { recursive: true });
    const { stdout } = await example("analyze.mjs", [dir]);
    expect(stdout).toContain("analysed with the model");
    expect(stdout).toContain(
      `units: ${readdirSync(path.join(root, "src/guard")).length}, folders: 1`,
    );
    expect(stdout).toContain(`report: ${path.join(dir, ".keel/report.md")}`);
  });
});
