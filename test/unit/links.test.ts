/**
 * Links lead nowhere outside: every file tool acts on the real path of its target (for a missing
 * path, of its deepest existing ancestor), and the walks (grep, glob, list_dir, analyze_code, the
 * analyst's enumeration) never follow a link out. Links planted as a command would: to a file
 * outside, to /etc, dangling, chained, and to a protected folder inside.
 */
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ALL_TOOLS } from "../../src/tools/registry.js";
import type { ToolContext, ToolResult } from "../../src/tools/types.js";
import { resolveInWorkspace } from "../../src/tools/workspace-path.js";
import { tempWorkspace } from "../support/harness.js";

const SECRET = "SECRET-BESIDE-THE-WORKSPACE";

let root: string;

let ws: string;

let ctx: ToolContext;

beforeAll(() => {
  root = tempWorkspace("keel-links-");
  ws = path.join(root, "ws");
  mkdirSync(path.join(ws, "src"), { recursive: true });
  writeFileSync(path.join(root, "secret.txt"), SECRET);
  writeFileSync(path.join(ws, "src", "a.ts"), "export const a = 1;\n");
  symlinkSync(path.join(root, "secret.txt"), path.join(ws, "src", "secret-link.ts"));
  symlinkSync(root, path.join(ws, "src", "dir-out"));
  symlinkSync("/etc", path.join(ws, "etc"));
  symlinkSync(path.join(root, "created-through-link.txt"), path.join(ws, "dangling.txt"));
  symlinkSync("src/dir-out", path.join(ws, "chain1"));
  symlinkSync("chain1", path.join(ws, "chain2"));
  symlinkSync(".vscode", path.join(ws, "editor"));
  symlinkSync("src/a.ts", path.join(ws, "inside-link.ts"));
  ctx = { workspace: ws, commandTimeoutMs: 5000, outputLimit: 50_000 };
});

const tool = (name: string) => ALL_TOOLS.find((t) => t.name === name)!;

const run = (name: string, args: Record<string, unknown>): Promise<ToolResult> =>
  tool(name).run(tool(name).schema.parse(args), ctx);

const text = (r: ToolResult) => (r.ok ? r.output : r.message);

describe("file tools act on the real path", () => {
  it("writing through a dangling link creates nothing outside", async () => {
    const r = await run("write_file", { path: "dangling.txt", content: "x" });
    expect(r.ok).toBe(false);
    expect(text(r)).toMatch(/leads nowhere/);
    expect(existsSync(path.join(root, "created-through-link.txt"))).toBe(false);
    expect((await run("write_file", { path: "dangling.txt/x", content: "x" })).ok).toBe(false);
  });
  it("a chain of links that ends outside is refused", async () => {
    for (const p of ["chain2/secret.txt", "chain2", "chain1/secret.txt"]) {
      expect((await run("read_file", { path: p })).ok, p).toBe(false);
      expect((await run("list_dir", { path: p })).ok, p).toBe(false);
    }
  });
  it("a link inside the workspace is followed, and the real path is what the rules see", () => {
    expect(resolveInWorkspace(ws, "inside-link.ts")).toMatchObject({ ok: true, rel: "src/a.ts" });
    // a link to a protected folder names the folder itself: the gate sees .vscode/tasks.json
    expect(resolveInWorkspace(ws, "editor/tasks.json").ok).toBe(false); // dangling until it exists
    mkdirSync(path.join(ws, ".vscode"));
    expect(resolveInWorkspace(ws, "editor/tasks.json")).toMatchObject({
      ok: true,
      rel: ".vscode/tasks.json",
    });
  });
});

describe("walks never follow a link out", () => {
  it("grep over the workspace finds nothing outside (the secret, /etc/passwd)", async () => {
    for (const pattern of ["SECRET-BESIDE", "root:"]) {
      const r = await run("grep", { pattern });
      expect(r.ok).toBe(true);
      expect(text(r)).not.toContain(SECRET);
      expect(text(r)).not.toMatch(/root:.*:0:0/);
    }
    // the workspace's own file through its own link is still found
    expect(text(await run("grep", { pattern: "const a" }))).toContain("src/a.ts:1");
  });

  it("glob lists no names outside", async () => {
    const r = await run("glob", { pattern: "**/*" });
    expect(text(r)).not.toMatch(/passwd|secret|hostname/);
    expect(text(r)).toContain("src/a.ts");
  });

  it("analyze_code on a folder reads nothing through a link", async () => {
    const r = await run("analyze_code", { path: "src" });
    expect(text(r)).not.toContain("secret-link");
    expect(text(r)).not.toContain("dir-out");
  });

  it("a hard link shares its file: it cannot be made to a file outside the sandbox's view", () => {
    // A hard link is the same file under a second name, so no tool can tell it from an ordinary
    // one. What holds: a command cannot make one to a file outside (the sandbox shows none of
    // them, and link() across its mounts fails), so here it is made by the test, as a person
    // could, and it reads as the workspace's own file.
    linkSync(path.join(ws, "src", "a.ts"), path.join(ws, "hard.ts"));
    expect(readFileSync(path.join(ws, "hard.ts"), "utf8")).toContain("const a");
    expect(statSync(path.join(ws, "hard.ts")).nlink).toBe(2);
  });
});
