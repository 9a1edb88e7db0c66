/**
 * Settings files: the project's `.keel/settings.json` and the user's `~/.config/keel/settings.json`,
 * with flags > environment > project > user > defaults, and bad files named with the field.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runConfig } from "../../src/coder/context.js";
import { startFakeOpenAI } from "../../src/testing/fake-openai/index.js";
import { runKeel } from "../support/cli.js";
import { call, calls, fakeOllamaPerTest, keelScript, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();
const script = keelScript((req) =>
  req.turn === 0
    ? calls(call("write_file", { path: "a.txt", content: "a" }))
    : { content: "Done." },
);

function setup(project?: unknown, user?: unknown) {
  const ws = tempWorkspace();
  const home = tempWorkspace("keel-home-");
  if (project !== undefined) {
    mkdirSync(path.join(ws, ".keel"));
    writeFileSync(
      path.join(ws, ".keel/settings.json"),
      typeof project === "string" ? project : JSON.stringify(project),
    );
  }
  if (user !== undefined) {
    mkdirSync(path.join(home, ".config/keel"), { recursive: true });
    writeFileSync(path.join(home, ".config/keel/settings.json"), JSON.stringify(user));
  }
  return { ws, home, env: { HOME: home, XDG_CONFIG_HOME: "" } };
}

/** `keel run "Create a.txt"` in `ws` on the Ollama server at `url`, nothing kept. */
const createIn = (ws: string, url: string, env: NodeJS.ProcessEnv) =>
  runKeel(
    ["run", "Create a.txt", "-w", ws, "--ollama-url", url, "--checkpoints", "memory", "--json"],
    { env },
  );

const models = (fake: { chatBodies(): Array<{ model: string }> }) => [
  ...new Set(fake.chatBodies().map((b) => b.model)),
];

describe("settings files", () => {
  it("project over user over defaults; environment over both; flags over all", async () => {
    const fake = await startFake({ script });
    const { ws, env } = setup({ model: "llama3.1:8b", maxTurns: 7 }, { model: "gemma3:4b" });
    const base = [
      "run",
      "Create a.txt",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--checkpoints",
      "memory",
      "--json",
    ];
    expect((await runKeel(base, { env })).code).toBe(0);
    expect(models(fake)).toEqual(["llama3.1:8b"]);

    const f2 = await startFake({ script });
    const b2 = base.map((a) => (a === fake.url ? f2.url : a));
    await runKeel(b2, { env: { ...env, KEEL_MODEL: "qwen3:8b" } });
    expect(models(f2)).toEqual(["qwen3:8b"]);

    const f3 = await startFake({ script });
    const b3 = base.map((a) => (a === fake.url ? f3.url : a));
    await runKeel([...b3, "--model", "llama3.1:8b"], { env: { ...env, KEEL_MODEL: "qwen3:8b" } });
    expect(models(f3)).toEqual(["llama3.1:8b"]);
  });

  it("the user's file applies where the project says nothing", async () => {
    const fake = await startFake({ script });
    const { ws, env } = setup(undefined, { model: "llama3.1:8b", allowHosts: ["api.example.com"] });
    const r = await createIn(ws, fake.url, env);
    expect(r.code, r.stderr).toBe(0);
    expect(models(fake)).toEqual(["llama3.1:8b"]);
  });

  it.each([
    ["{ not json", /\.keel\/settings\.json: not valid JSON/],
    [{ maxTurns: "many" }, /\.keel\/settings\.json, field "maxTurns": .*expected number/],
    [{ modle: "x" }, /\.keel\/settings\.json, field "modle": unknown setting \(known: .*model/],
    [["model"], /must be a JSON object of settings/],
  ])("a bad project file %j: exit 2, naming the file and the field", async (content, message) => {
    const { ws, env } = setup(content);
    const r = await runKeel(["run", "x", "-w", ws, "--checkpoints", "memory"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("a project's file does not choose where keel analyze writes its report (a file of yours outside)", async () => {
    const target = `report-target-${process.pid}-${Date.now()}.md`;
    const { ws, env } = setup({ out: `../${target}`, depth: "quick" });
    const beside = path.join(ws, "..", target);
    writeFileSync(beside, "precious\n");
    writeFileSync(path.join(ws, "a.ts"), "export const a = 1;\n");
    const r = await runKeel(["analyze", ws, "-m", "none"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/settings\.json, field "out": refused — only you may set it/);
    expect(readFileSync(beside, "utf8")).toBe("precious\n");
    expect(existsSync(path.join(ws, ".keel/report.md"))).toBe(true);
  });

  it.each([
    // a project's file would widen the sandbox, drop it, or take away the person's way back
    [{ allowRead: ["/"] }, "allowRead"],
    [{ runCommandsUnsandboxed: true }, "runCommandsUnsandboxed"],
    [{ undo: false }, "undo"],
    [{ checkCommand: "touch ../outside" }, "checkCommand"],
    [{ maxTurns: 1000 }, "maxTurns"],
  ])(
    "a project's %j is refused, named once on stderr; the run goes on with the rest",
    async (content, key) => {
      const fake = await startFake({ script });
      const { ws, env } = setup({ ...content, model: "llama3.1:8b" });
      const r = await createIn(ws, fake.url, env);
      expect(r.code, r.stderr).toBe(0);
      expect(models(fake)).toEqual(["llama3.1:8b"]);
      const file = path.join(ws, ".keel/settings.json");
      expect(r.stderr.split(`${file}, field "${key}": refused`)).toHaveLength(2);
    },
  );

  it("runs started from code and Studio read them too", () => {
    const { ws } = setup({ model: "llama3.1:8b", toolMode: "prompt" });
    const { context } = runConfig("t", { workspace: ws });
    expect(context).toMatchObject({ model: "llama3.1:8b", toolMode: "prompt" });
  });
});

describe("a project's file cannot choose where your prompts and keys go", () => {
  it.each<[string, { baseUrl?: boolean; apiKey?: string }]>([
    ["the provider alone (the OpenAI-compatible URL from your environment)", {}],
    ["the provider, a base URL and a key of its own", { baseUrl: true, apiKey: "sk-theirs" }],
  ])(
    "%s: the run uses your --ollama-url, the recorder gets nothing, and the file is named",
    async (_, extra) => {
      const ollama = await startFake({ script });
      const recorder = await startFakeOpenAI({ script });
      try {
        const project = {
          provider: "openai",
          ...(extra.baseUrl ? { baseUrl: recorder.baseUrl } : {}),
          ...(extra.apiKey ? { apiKey: extra.apiKey } : {}),
          model: "llama3.1:8b",
        };
        const { ws, env } = setup(project);
        const r = await createIn(ws, ollama.url, {
          ...env,
          OPENAI_API_KEY: "sk-person-secret",
          // set for another tool: only a provider openai would send anything there
          ...(extra.baseUrl ? {} : { KEEL_BASE_URL: recorder.baseUrl }),
        });
        expect(recorder.requests).toEqual([]);
        expect(r.code, r.stderr).toBe(0);
        expect(readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("a");
        // the rest of the file applies: its model reached your server
        expect(models(ollama)).toEqual(["llama3.1:8b"]);
        expect(JSON.stringify(ollama.requests)).not.toContain("sk-");
        // refused visibly, once, naming the file and the entry
        const file = path.join(ws, ".keel/settings.json");
        for (const key of Object.keys(project).filter((k) => k !== "model")) {
          const notices = r.stderr.split(`${file}, field "${key}": refused`).length - 1;
          expect(notices, `${key}: ${r.stderr}`).toBe(1);
        }
      } finally {
        await recorder.close();
      }
    },
  );
});
