/**
 * The keel command on an OpenAI-compatible server (the fake, as llama.cpp, LM Studio and vLLM):
 * `keel run` builds through native calls and through a call left in content, `keel models` lists
 * what discovery found, `keel analyze` works, the environment chooses the provider, and a server
 * that is down is named with what to do.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../../src/testing/fake-openai/index.js";
import { analystScript } from "../../src/testing/script.js";
import { runKeel } from "../support/cli.js";
import { call, calls, keelScript, tempWorkspace } from "../support/harness.js";

const MODEL = "qwen2.5-coder-7b-instruct";
let started: FakeOpenAI[] = [];
afterEach(async () => {
  await Promise.all(started.map((s) => s.close()));
  started = [];
});
const fake = async (...a: Parameters<typeof startFakeOpenAI>) => {
  const f = await startFakeOpenAI(...a);
  started.push(f);
  return f;
};

const buildScript = keelScript((req) =>
  req.turn === 0
    ? calls(call("write_file", { path: "src/api.js", content: "export const ok = true;\n" }))
    : { content: "Created src/api.js." },
);

describe("keel on an OpenAI-compatible server", () => {
  it("run --provider openai builds a file through native tool calls", async () => {
    const f = await fake({ server: "llama.cpp", script: buildScript });
    const ws = tempWorkspace();
    const r = await runKeel([
      "run",
      "Create src/api.js exporting ok",
      "-w",
      ws,
      "--provider",
      "openai",
      "--base-url",
      f.baseUrl,
      "--model",
      MODEL,
      "--checkpoints",
      "memory",
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ status: "done", files_written: ["src/api.js"] });
    expect(readFileSync(path.join(ws, "src/api.js"), "utf8")).toBe("export const ok = true;\n");
    expect(r.stderr).toMatch(/channel\s+native tool calling/);
  });

  it("salvages a call the server left in content, and says so", async () => {
    const f = await fake({
      server: "vllm",
      script: keelScript((req) =>
        req.turn === 0
          ? {
              content:
                '<tool_call>\n{"name": "write_file", "arguments": {"path": "notes.md", "content": "# Notes\\n"}}\n</tool_call>',
            }
          : { content: "Created notes.md." },
      ),
    });
    const ws = tempWorkspace();
    const r = await runKeel(
      ["run", "Create notes.md with a heading", "-w", ws, "--checkpoints", "memory", "--json"],
      { env: { KEEL_PROVIDER: "openai", KEEL_BASE_URL: f.baseUrl, KEEL_MODEL: MODEL } },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(path.join(ws, "notes.md"), "utf8")).toBe("# Notes\n");
    expect(r.stderr).toMatch(/salvage/);
  });

  it("models --provider openai lists what discovery found: context, tool mode, text format, server", async () => {
    const f = await fake({ server: "lmstudio" });
    const r = await runKeel(["models", "--provider", "openai", "--base-url", f.baseUrl, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<Record<string, unknown>>;
    expect(rows.map((m) => m.model)).toEqual([MODEL, "llama-3.2-3b-instruct"]);
    expect(rows[0]).toMatchObject({ server: "lmstudio", contextLength: 32768, toolMode: "native" });
    expect(rows[1]).toMatchObject({ format: "llama3-json" });
    const text = await runKeel(["models", "--provider", "openai", "--base-url", f.baseUrl]);
    expect(text.stdout).toMatch(/LM Studio at http/);
    const doctor = await runKeel([
      "doctor",
      "--provider",
      "openai",
      "--base-url",
      f.baseUrl,
      "--json",
    ]);
    expect(doctor.json).toMatchObject({
      server: { reachable: true, kind: "lmstudio", detail: "LM Studio, 2 models" },
    });
    // the model a run would ask for: there, or named as missing before a run fails on it
    const doctorFor = (model: string) =>
      runKeel(["doctor", "--provider", "openai", "--base-url", f.baseUrl, "-m", model, "--json"]);
    expect((await doctorFor(MODEL)).json).toMatchObject({
      model: { name: MODEL, available: true },
    });
    expect((await doctorFor("qwen9:70b")).json).toMatchObject({
      model: {
        name: "qwen9:70b",
        available: false,
        detail:
          'the server has no model "qwen9:70b": choose another with --model (keel models lists them)',
      },
    });
    // a llama-server with one model answers under any name: doctor says which model that is
    const llama = await fake({ server: "llama.cpp" });
    const anyName = await runKeel([
      ...["doctor", "--provider", "openai", "--base-url", llama.baseUrl],
      ...["-m", "totally-bogus-model", "--json"],
    ]);
    expect(anyName.json).toMatchObject({
      model: {
        name: "totally-bogus-model",
        available: true,
        detail: `the server answers to any name with the one model it serves, ${MODEL}`,
      },
    });
    const help = await runKeel(["models", "--help"]);
    expect(help.stdout).toMatch(/llama-server -m model\.gguf --jinja/);
    expect(help.stdout).toMatch(/--enable-auto-tool-choice/);
  });

  it("analyze --provider openai analyses with the model", async () => {
    const f = await fake({ server: "vllm", script: analystScript() });
    const dir = tempWorkspace();
    writeFileSync(path.join(dir, "a.js"), "export const a = 1;\n");
    const r = await runKeel([
      "analyze",
      dir,
      "--provider",
      "openai",
      "--base-url",
      f.baseUrl,
      "--model",
      MODEL,
      "--checkpoints",
      "memory",
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ model: MODEL });
    expect(f.chatBodies().length).toBeGreaterThan(0);
  });

  it("a server that is down: exit 3, named, with --base-url", async () => {
    const ws = tempWorkspace();
    const r = await runKeel([
      "run",
      "Create a.txt",
      "-w",
      ws,
      "--provider",
      "openai",
      "--base-url",
      "http://127.0.0.1:9/v1",
      "--checkpoints",
      "memory",
      "--retries",
      "0",
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toMatch(
      /OpenAI-compatible server at http:\/\/127\.0\.0\.1:9\/v1.*--base-url/s,
    );
  });
});
