// The escape corpus against resolveInWorkspace and through every path-taking tool: one file by design.
/**
 * Sandbox escapes through every path-taking tool: nothing outside the workspace is read or written;
 * a link inside the workspace is followed, and its real path is what the rules see.
 */
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ALL_TOOLS } from "../../../src/tools/registry.js";
import { printableName } from "../../../src/printable.js";
import { sandboxed } from "../../../src/tools/fs-tools.js";
import { resolveInWorkspace } from "../../../src/tools/workspace-path.js";
import type { ToolContext } from "../../../src/tools/types.js";
import { tempWorkspace } from "../../support/harness.js";
import { linkedWorkspace } from "../../support/links.js";

let root: string;
let ws: string;
let outside: string;
let ctx: ToolContext;

beforeAll(() => {
  root = tempWorkspace("keel-sandbox-");
  ws = path.join(root, "ws");
  outside = path.join(root, "outside");
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(path.join(outside, "secret.txt"), "SECRET");
  symlinkSync(outside, path.join(ws, "link-out"));
  symlinkSync(path.join(outside, "secret.txt"), path.join(ws, "secret-link.txt"));
  mkdirSync(path.join(ws, "src"));
  writeFileSync(path.join(ws, "src", "ok.txt"), "fine");
  ctx = { workspace: ws, commandTimeoutMs: 5000, outputLimit: 10_000 };
});

/** Paths that must be refused. */
const ESCAPES = [
  "../outside/secret.txt",
  "../../etc/passwd",
  "..",
  "../",
  "./../outside",
  "src/../../outside/secret.txt",
  "src/../../../../../../etc/passwd",
  "..\\outside\\secret.txt",
  "src\\..\\..\\outside",
  "/etc/passwd",
  "/",
  "/tmp",
  "~/secret.txt",
  "~",
  "~/",
  "~root/.ssh/id_rsa",
  "C:\\Windows\\system.ini",
  "c:/windows",
  "D:",
  "\\\\server\\share\\x",
  "//server/share/x",
  "link-out/secret.txt",
  "link-out",
  "secret-link.txt",
  "link-out/new.txt",
  "link-out/../../etc",
  "src\0/ok.txt",
  "ok.txt\0../../etc/passwd",
  `${"a/".repeat(3000)}x`,
  `${"../".repeat(50)}etc/passwd`,
];

/** Look-alikes of "..", "/" and "~": ordinary names here, so they must stay inside the workspace. */
const LOOKALIKES = [
  "．．/secret.txt",
  "‥/secret.txt",
  "。。/x",
  "∕etc∕passwd",
  "⁄etc/passwd",
  "～/x",
  "%2e%2e/secret.txt",
];

describe("resolveInWorkspace", () => {
  it("has a corpus of at least 30 escape attempts and look-alikes", () => {
    expect(ESCAPES.length + LOOKALIKES.length).toBeGreaterThanOrEqual(30);
  });
  it.each(LOOKALIKES)("keeps the look-alike %j inside", (p) => {
    const r = resolveInWorkspace(ws, p);
    expect(r.ok && r.abs.startsWith(ws + path.sep)).toBe(true);
  });
  it.each(ESCAPES)("refuses %j", (p) => {
    expect(resolveInWorkspace(ws, p).ok).toBe(false);
  });
  it("refuses the absolute path of a file outside", () => {
    expect(resolveInWorkspace(ws, path.join(outside, "secret.txt")).ok).toBe(false);
  });
  it.each([["src/ok.txt"], ["./src/ok.txt"], [".\\src\\ok.txt"], ["src/new/deep.txt"], ["．．/x"]])(
    "accepts %j inside",
    (p) => {
      expect(resolveInWorkspace(ws, p).ok).toBe(true);
    },
  );
  it.each([
    ["a\u001b[2Kb.txt", "\\x1b", 2],
    ["src/\u001b]0;title\u0007.sh", "\\x1b", 5],
    ["notes\r.txt", "\\x0d", 6],
    ["two\nlines.txt", "\\x0a", 4],
    ["tab\there.txt", "\\x09", 4],
    ["x\u009b2K.txt", "\\x9b", 2],
    ["evil\u202Etxt.sh", "\\u202e", 5],
    ["isolate\u2066.js", "\\u2066", 8],
  ])("the file tools refuse the control character in %j, naming it", (p, code, at) => {
    const r = sandboxed(ws, p);
    expect(r).toMatchObject({ failure: { ok: false, kind: "invalid_arguments" } });
    if ("failure" in r && !r.failure.ok) {
      expect(r.failure.message).toContain(`control character ${code} at position ${at}`);
      // nothing of the name reaches the model or a terminal raw
      expect([...r.failure.message].filter((c) => printableName(c) !== c)).toEqual([]);
    }
  });
  it("trims a newline around a path, as models add one", () => {
    expect(sandboxed(ws, "src/ok.txt\n")).toMatchObject({ rel: "src/ok.txt" });
  });
  it("accepts an absolute path inside the workspace", () => {
    expect(resolveInWorkspace(ws, path.join(ws, "src/ok.txt"))).toMatchObject({
      ok: true,
      rel: "src/ok.txt",
    });
  });
});

describe("a path through a file", () => {
  it("is resolved without throwing, and write_file says what is wrong", async () => {
    expect(resolveInWorkspace(ws, "src/ok.txt/inner.txt")).toMatchObject({
      ok: true,
      rel: "src/ok.txt/inner.txt",
    });
    const write = ALL_TOOLS.find((t) => t.name === "write_file")!;
    const r = await write.run(
      write.schema.parse({ path: "src/ok.txt/inner.txt", content: "x" }),
      ctx,
    );
    expect(r.ok).toBe(false);
  });
});

describe("every path-taking tool refuses escapes", () => {
  const argsFor: Record<string, (p: string) => Record<string, unknown>> = {
    read_file: (p) => ({ path: p }),
    write_file: (p) => ({ path: p, content: "PWNED" }),
    edit_file: (p) => ({ path: p, old_text: "SECRET", new_text: "PWNED" }),
    list_dir: (p) => ({ path: p }),
    make_dir: (p) => ({ path: `${p}/newdir` }),
    glob: (p) => ({ pattern: "*", path: p }),
    grep: (p) => ({ pattern: "SECRET", path: p }),
    analyze_code: (p) => ({ path: p }),
  };
  for (const [name, args] of Object.entries(argsFor)) {
    it(`${name}`, async () => {
      const tool = ALL_TOOLS.find((t) => t.name === name)!;
      for (const p of ESCAPES) {
        const r = await tool.run(tool.schema.parse(args(p)), ctx);
        expect(r.ok, `${name} ${JSON.stringify(p)}`).toBe(false);
        if (!r.ok) expect(r.message).not.toContain("SECRET");
      }
      expect(readdirSync(outside).sort()).toEqual(["secret.txt"]);
      expect(existsSync(path.join(root, "outside-dir"))).toBe(false);
    });
  }

  it("glob and grep refuse patterns that climb out", async () => {
    const glob = ALL_TOOLS.find((t) => t.name === "glob")!;
    const grep = ALL_TOOLS.find((t) => t.name === "grep")!;
    expect((await glob.run({ pattern: "../outside/*" }, ctx)).ok).toBe(false);
    expect((await grep.run({ pattern: "SECRET", glob: "../**/*.txt" }, ctx)).ok).toBe(false);
  });
});

let linked: string;
beforeAll(() => {
  linked = linkedWorkspace().ws;
});

describe("file tools act on the real path", () => {
  it("a link inside the workspace is followed, and the real path is what the rules see", () => {
    expect(resolveInWorkspace(linked, "inside-link.ts")).toMatchObject({
      ok: true,
      rel: "src/a.ts",
    });
    // a link to a protected folder names the folder itself: the gate sees .vscode/tasks.json
    expect(resolveInWorkspace(linked, "editor/tasks.json").ok).toBe(false); // dangling until it exists
    mkdirSync(path.join(linked, ".vscode"));
    expect(resolveInWorkspace(linked, "editor/tasks.json")).toMatchObject({
      ok: true,
      rel: ".vscode/tasks.json",
    });
  });
});
