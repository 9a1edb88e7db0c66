/**
 * Settings files: the project's `.keel/settings.json` and the user's `~/.config/keel/settings.json`,
 * with flags > environment > project > user > defaults, and bad files named with the field.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runConfig } from "../../src/agent/context.js";
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
    const r = await runKeel(
      [
        "run",
        "Create a.txt",
        "-w",
        ws,
        "--ollama-url",
        fake.url,
        "--checkpoints",
        "memory",
        "--json",
      ],
      { env },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(models(fake)).toEqual(["llama3.1:8b"]);
  });

  it.each([
    ["{ not json", /\.keel\/settings\.json: not valid JSON/],
    [{ maxTurns: "many" }, /\.keel\/settings\.json, field "maxTurns": .*expected number/],
    [{ modle: "x" }, /\.keel\/settings\.json, field "modle": unknown setting \(known: .*model/],
    [{ allowRead: ["/"] }, /field "allowRead": only your user settings file may set it/],
    [
      { runCommandsUnsandboxed: true },
      /field "runCommandsUnsandboxed": only your user settings file/,
    ],
    // a project's file would take away the person's way back without a word
    [{ undo: false }, /field "undo": only your user settings file/],
    [["model"], /must be a JSON object of settings/],
  ])("a bad project file %j: exit 2, naming the file and the field", async (content, message) => {
    const { ws, env } = setup(content);
    const r = await runKeel(["run", "x", "-w", ws, "--checkpoints", "memory"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("a project's file does not choose where keel analyze writes its report (a file of yours outside)", async () => {
    const target = `report-target-${process.pid}-${Date.now()}.md`;
    const { ws, env } = setup({ out: `../${target}` });
    const beside = path.join(ws, "..", target);
    writeFileSync(beside, "precious\n");
    const r = await runKeel(["analyze", ws, "-m", "none"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/field "out": only your user settings file/);
    expect(readFileSync(beside, "utf8")).toBe("precious\n");
  });

  it("runs started from code and Studio read them too", () => {
    const { ws } = setup({ model: "llama3.1:8b", errorStreak: 5 });
    const { context } = runConfig("t", { workspace: ws });
    expect(context).toMatchObject({ model: "llama3.1:8b", errorStreak: 5 });
  });
});
