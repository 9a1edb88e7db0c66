/**
 * While a command runs, the sandbox holds each missing protected path (`.vscode`, `.envrc`, …) with
 * an empty read-only folder. The model is shown the workspace as it is: a listing of a one-file
 * workspace lists that file, and the note names only the protected path the command tried to write.
 * Real sandbox, the run_command tool.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_TOOLS } from "../../src/tools/registry.js";
import { tempWorkspace } from "../support/harness.js";

const runCommand = ALL_TOOLS.find((t) => t.name === "run_command")!;
const run = (workspace: string, command: string) =>
  runCommand.run({ command }, { workspace, commandTimeoutMs: 20_000, outputLimit: 16_000 });

describe("the sandbox's stand-in folders", () => {
  it("are not in what a listing shows, nor in the note; a .gitignore keeps its lines", async () => {
    const ws = tempWorkspace();
    writeFileSync(path.join(ws, "app.py"), "print('hi')\n");
    writeFileSync(path.join(ws, "ignore.txt"), "node_modules\n.vscode/\n.idea\n.envrc\n");
    const r = await run(
      ws,
      "ls; ls -a; ls -la; ls -R; find . -maxdepth 1; du -a .; cat ignore.txt",
    );
    expect(r.ok).toBe(true);
    const out = r.ok ? r.output : "";
    // the listings show the two files and nothing of the stand-ins (ignore.txt's lines aside)
    const inIgnore: Record<string, string[]> = { ".vscode": [".vscode/"], ".envrc": [".envrc"] };
    for (const name of [".vscode", ".mcp.json", ".envrc", ".kiro", ".Rprofile", "mise.toml"])
      expect(out.split("\n").filter((l) => l.endsWith(name) || l.endsWith(`${name}/`))).toEqual(
        inIgnore[name] ?? [],
      );
    expect(out).toMatch(/\n\.\/app\.py\n/);
    expect(out).toMatch(/ app\.py\n/);
    // the file's own lines stay
    expect(out).toMatch(/\nnode_modules\n\.vscode\/\n\.idea\n\.envrc$/);
    expect(out).not.toMatch(/read-only to commands/);
    // and the stand-ins are gone afterwards
    expect(readdirSync(ws).sort()).toEqual(["app.py", "ignore.txt"]);
  }, 60_000);

  it("the note names the protected path a command tried to write, and only that", async () => {
    const ws = tempWorkspace();
    const r = await run(ws, "ls -a; touch .envrc");
    expect(r.ok).toBe(false);
    const out = r.ok ? r.output : r.message;
    expect(out).toMatch(/\[sandbox\] \.envrc is read-only to commands/);
  }, 60_000);

  it("a keel killed mid-command leaves them; the next command of any keel clears them, not a person's file", async () => {
    const ws = tempWorkspace();
    const state = tempWorkspace("keel-state-");
    writeFileSync(path.join(ws, "app.py"), "print('hi')\n");
    const marker = `sleep ${(30 + Math.random()).toFixed(3)}`;
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        path.join(import.meta.dirname, "../support/command-child.ts"),
        ws,
        marker,
      ],
      { env: { ...process.env, KEEL_STATE_DIR: state }, stdio: "ignore" },
    );
    try {
      for (let i = 0; i < 200 && !existsSync(path.join(ws, ".mcp.json")); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(existsSync(path.join(ws, ".mcp.json")), "the command's stand-ins").toBe(true);
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    } finally {
      child.kill("SIGKILL");
      spawnSync("pkill", ["-f", marker]);
    }
    // killed: its stand-ins stay (npm and MCP clients would fail on these folders)
    expect(readdirSync(ws).length).toBeGreaterThan(20);
    expect(readdirSync(path.join(state, "stand-ins"))).toHaveLength(1);
    writeFileSync(path.join(ws, ".vscode/settings.json"), "{}\n"); // a person's file in one
    const saved = process.env.KEEL_STATE_DIR;
    process.env.KEEL_STATE_DIR = state;
    try {
      expect((await run(ws, "true")).ok).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.KEEL_STATE_DIR;
      else process.env.KEEL_STATE_DIR = saved;
    }
    expect(readdirSync(ws).sort()).toEqual([".vscode", "app.py"]);
    expect(readdirSync(path.join(state, "stand-ins"))).toEqual([]);
  }, 60_000);
});
