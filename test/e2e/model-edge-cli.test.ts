/**
 * The model edge through the keel command (issues 24 and 27): a server that rejects a request
 * argument is remembered in the workspace's store (the next run's first request leaves it out,
 * `keel doctor` shows it and names the server); a bad API key and a context too small for keel's
 * own prompt end the run (exit 3) with what to do.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../../src/testing/fake-openai/index.js";
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

const script = keelScript((req) =>
  req.turn === 0
    ? calls(call("write_file", { path: "a.txt", content: "a\n" }))
    : { content: "Created a.txt." },
);

const chats = (f: FakeOpenAI) =>
  f.requests
    .filter((r) => r.method === "POST" && r.path === "/v1/chat/completions")
    .map((r) => r.body as Record<string, unknown>);

describe("keel and the model edge", () => {
  it("a rejected argument is dropped, remembered in the store, and shown by keel doctor", async () => {
    const f = await fake({ server: "llama.cpp", script, rejectArguments: ["max_tokens"] });
    const ws = tempWorkspace();
    const server = ["--provider", "openai", "--base-url", f.baseUrl];
    const first = await runKeel(["run", "Create a.txt", "-w", ws, ...server, "--model", MODEL]);
    expect(first.code, first.stderr).toBe(0);
    expect(chats(f)[0]).toHaveProperty("max_tokens");
    const before = chats(f).length;
    const second = await runKeel([
      "run",
      "Create a.txt again",
      "-w",
      ws,
      ...server,
      "--model",
      MODEL,
    ]);
    expect(second.code, second.stderr).toBe(0);
    expect(chats(f).slice(before)[0]).not.toHaveProperty("max_tokens");

    const doctor = await runKeel(["doctor", "-w", ws, ...server, "--json"]);
    expect(doctor.json).toMatchObject({
      server: { reachable: true, kind: "llama.cpp", dropped: ["max_tokens"] },
    });
    const text = await runKeel(["doctor", "-w", ws, ...server]);
    // a llama-server serves one model, as the real one lists it (its file), with 4 slots
    expect(text.stdout).toMatch(/llama\.cpp llama-server, 1 models, 4 slots/);
    expect(text.stdout).toMatch(/remembered: the server rejects max_tokens/);
  });

  it("a bad API key: exit 3, an auth error naming --api-key and OPENAI_API_KEY", async () => {
    const f = await fake({ server: "llama.cpp", script, apiKey: "sk-local" });
    const ws = tempWorkspace();
    const r = await runKeel(
      ["run", "Create a.txt", "-w", ws, "--provider", "openai", "--base-url", f.baseUrl],
      { env: { OPENAI_API_KEY: "wrong", KEEL_MODEL: MODEL } },
    );
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toMatch(/failed \(auth\).*--api-key or OPENAI_API_KEY/s);
    expect(r.stderr + r.stdout).not.toMatch(/bad_request/);
  });

  it("a 512-token server: the server's n_ctx named against keel's minimum prompt", async () => {
    const f = await fake({
      server: "llama.cpp",
      script,
      models: { [MODEL]: { contextLength: 512, tools: true } },
    });
    const ws = tempWorkspace();
    const r = await runKeel([
      "run",
      "Create a.txt",
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
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr + r.stdout).toMatch(
      /is 512 tokens, smaller than keel's minimum prompt of \d+ tokens/,
    );
    // the context it advises takes keel's prompt
    const need = Number(/needs a context of at least (\d+) tokens/.exec(r.stderr + r.stdout)?.[1]);
    expect(need).toBeGreaterThan(
      Number(/minimum prompt of (\d+) tokens/.exec(r.stderr + r.stdout)?.[1]),
    );
    expect(r.stderr + r.stdout).toContain(`llama-server -c ${need} `);
  });
});
