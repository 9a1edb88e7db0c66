/**
 * The package as another project gets it: `npm pack`, install the tarball into a fresh project,
 * import keel by name and run a graph (against the fake Ollama server).
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { call, calls, keelScript, startFakeOllama, tempWorkspace } from "../support/harness.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
let fake: FakeOllama;
let project: string;

beforeAll(async () => {
  fake = await startFakeOllama({
    script: keelScript((req) =>
      req.turn === 0
        ? calls(call("write_file", { path: "out.txt", content: "from the package" }))
        : { content: "done" },
    ),
  });
  project = tempWorkspace("keel-consumer-");
  const { stdout } = await run(
    "npm",
    ["pack", "--pack-destination", project, "--ignore-scripts", "--json"],
    { cwd: root },
  );
  const tarball = (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename;
  writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "consumer", type: "module", private: true }),
  );
  // --ignore-scripts keeps the test fast (no native rebuild); nothing here opens SQLite.
  await run(
    "npm",
    ["install", `./${tarball}`, "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"],
    { cwd: project },
  );
}, 180_000);

afterAll(async () => fake?.close());

describe("installed package", () => {
  it("ships types and dist, and runs a graph when imported by name", async () => {
    const pkg = JSON.parse(
      readFileSync(path.join(project, "node_modules/keel-agent/package.json"), "utf8"),
    ) as { types: string };
    expect(
      readFileSync(path.join(project, "node_modules/keel-agent", pkg.types), "utf8"),
    ).toContain("createCoderGraph");
    const ws = tempWorkspace();
    writeFileSync(
      path.join(project, "use.mjs"),
      `import { runAgent, createAnalystGraph, ContextSchema } from "keel-agent";
import { parseToolCalls } from "keel-agent/tool-calls";
import { startFakeOllama } from "keel-agent/testing";
const state = await runAgent("Create out.txt", { workspace: ${JSON.stringify(ws)}, ollamaUrl: ${JSON.stringify(fake.url)} });
console.log(JSON.stringify({ status: state.status, files: state.filesWritten, parsed: parseToolCalls('[TOOL_CALLS]f[ARGS]{"a":1}').calls, analyst: typeof createAnalystGraph, fake: typeof startFakeOllama, fields: Object.keys(ContextSchema.shape).length }));`,
    );
    const { stdout } = await run(process.execPath, ["use.mjs"], { cwd: project });
    expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toEqual({
      status: "done",
      files: ["out.txt"],
      parsed: [{ name: "f", arguments: { a: 1 } }],
      analyst: "function",
      fake: "function",
      fields: expect.any(Number),
    });
    expect(readFileSync(path.join(ws, "out.txt"), "utf8")).toBe("from the package");
  });

  it("installs without the packages only the bench and the tests use; the createAgent peer says how to add langchain", async () => {
    const installed = (name: string) => existsSync(path.join(project, "node_modules", name));
    expect(installed("keel-agent")).toBe(true);
    expect(installed("langchain")).toBe(false);
    expect(installed("@langchain/langgraph-checkpoint-sqlite")).toBe(false);
    const keel = path.join(project, "node_modules/keel-agent/dist/cli/main.js");
    const refused = await run(
      process.execPath,
      [keel, "eval", "--agent", "create-agent", "--model", "m", "--checkpoints", "sqlite:e.db"],
      { cwd: project },
    ).catch((e: { code: number; stderr: string }) => e);
    expect(refused).toMatchObject({ code: 2 });
    expect((refused as { stderr: string }).stderr).toContain("npm install langchain");
  });
});
