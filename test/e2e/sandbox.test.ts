/**
 * The OS sandbox at work: a normal build still works inside it, the user's grants open exactly what
 * they name, and `keel doctor` reports it. (The escape suite is escape.test.ts; the machine without a
 * sandbox is sandbox-fallback.test.ts.)
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCommandTool } from "../../src/tools/run-command.js";
import type { ToolContext } from "../../src/tools/types.js";
import { runKeel } from "../support/cli.js";
import { call, calls, fakeOllamaPerTest, keelScript, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();

describe("a normal build inside the sandbox", () => {
  it("npm install (approved), node --test and python3 -m py_compile work, with their files on disk", async () => {
    const ws = tempWorkspace();
    mkdirSync(path.join(ws, "vendor/left"), { recursive: true });
    writeFileSync(
      path.join(ws, "vendor/left/package.json"),
      JSON.stringify({ name: "left", version: "1.0.0", main: "index.js" }),
    );
    writeFileSync(path.join(ws, "vendor/left/index.js"), "module.exports = (s) => `<${s}`;\n");
    writeFileSync(
      path.join(ws, "package.json"),
      JSON.stringify({
        name: "app",
        version: "1.0.0",
        dependencies: { left: "file:./vendor/left" },
      }),
    );
    writeFileSync(
      path.join(ws, "app.test.js"),
      'const test = require("node:test");\nconst assert = require("node:assert");\ntest("left", () => assert.equal(require("left")("a"), "<a"));\n',
    );
    writeFileSync(path.join(ws, "tool.py"), "def f(x):\n    return x + 1\n");
    const asked: string[] = [];
    const ctx: ToolContext = { workspace: ws, commandTimeoutMs: 120_000, outputLimit: 20_000 };
    // as the gate does: what the command declares it needs, a person allows
    const run = async (command: string) => {
      const { ask } = await runCommandTool.declare!({ command }, ctx);
      if (ask) asked.push(command);
      return runCommandTool.run({ command }, { ...ctx, approved: ask !== undefined });
    };
    const install = await run("npm install --no-audit --no-fund --offline");
    expect(install).toMatchObject({ ok: true });
    expect(asked).toEqual(["npm install --no-audit --no-fund --offline"]);
    expect(existsSync(path.join(ws, "node_modules/left/index.js"))).toBe(true);
    expect(existsSync(path.join(ws, "package-lock.json"))).toBe(true);

    const test = await run("node --test");
    expect(test).toMatchObject({ ok: true });
    expect(test.ok && test.output).toMatch(/# pass 1/);

    const compile = await run("python3 -m py_compile tool.py");
    expect(compile).toMatchObject({ ok: true });
    expect(existsSync(path.join(ws, "__pycache__"))).toBe(true);
    expect(asked).toHaveLength(1); // only the install needed a person
  }, 120_000);
});

describe("grants through the CLI", () => {
  it("--allow-read opens one outside folder to commands, --allow-write another; the rest stays hidden", async () => {
    const root = tempWorkspace("keel-grants-");
    const ws = path.join(root, "ws");
    const data = path.join(root, "data");
    const out = path.join(root, "out");
    const other = path.join(root, "other");
    for (const d of [ws, data, out, other]) mkdirSync(d);
    writeFileSync(path.join(data, "input.csv"), "a,b\n1,2\n");
    writeFileSync(path.join(other, "private.txt"), "PRIVATE-NOT-GRANTED");
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(
              call("run_command", {
                command: `wc -l ${data}/input.csv && cp ${data}/input.csv ${out}/copy.csv && cat ${other}/private.txt`,
              }),
            )
          : { content: "Copied." },
      ),
    });
    const r = await runKeel([
      "run",
      "Copy the data file into the output folder",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--checkpoints",
      "memory",
      "--allow-read",
      data,
      "--allow-write",
      out,
      "--json",
    ]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(readFileSync(path.join(out, "copy.csv"), "utf8")).toBe("a,b\n1,2\n");
    const told = fake.chatBodies({ turnsOnly: true })[1]!.messages!.find((m) => m.role === "tool")!;
    expect(told.content).toContain("2 ");
    expect(told.content).toMatch(/private\.txt: No such file or directory/);
    expect(JSON.stringify(fake.requests.map((q) => q.body))).not.toContain("PRIVATE-NOT-GRANTED");
    expect(r.stdout + r.stderr).not.toMatch(/cannot sandbox/);
  }, 60_000);
});

describe("keel doctor", () => {
  it("reports a working sandbox (checked with a real sandboxed command) and what commands may read", async () => {
    const r = await runKeel(["doctor", "--ollama-url", "http://127.0.0.1:9", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      sandbox: { ok: true, platform: "linux" },
      server: { reachable: false },
    });
    expect(r.json!.readable).toEqual(expect.arrayContaining(["/usr", "/etc"]));
    const text = await runKeel(["doctor", "--ollama-url", "http://127.0.0.1:9"]);
    expect(text.stdout).toMatch(/sandbox\s+ok\s+bubblewrap/);
    expect(text.stdout).toMatch(/commands write: the workspace only/);
  }, 30_000);
});
