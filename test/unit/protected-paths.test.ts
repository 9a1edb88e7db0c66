/** The one list of protected workspace paths: anchored on sandbox-runtime's own, matched at any depth. */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  COMMAND_PROTECTED,
  isKeelOwn,
  PROTECTED_PATHS,
  protectedEntry,
  sandboxDenyPaths,
} from "../../src/sandbox/protected.js";

/** sandbox-runtime's DANGEROUS_FILES and DANGEROUS_DIRECTORIES, read from its installed source. */
function runtimeList(): string[] {
  const main = createRequire(import.meta.url).resolve("@anthropic-ai/sandbox-runtime");
  const src = readFileSync(path.join(path.dirname(main), "sandbox", "sandbox-utils.js"), "utf8");
  const list = (name: string) =>
    [
      ...(new RegExp(`export const ${name} = \\[([^\\]]*)\\]`).exec(src)?.[1] ?? "").matchAll(
        /'([^']+)'/g,
      ),
    ].map((m) => m[1]!);
  const names = [...list("DANGEROUS_FILES"), ...list("DANGEROUS_DIRECTORIES")];
  expect(names.length).toBeGreaterThanOrEqual(10);
  return names;
}

describe("PROTECTED_PATHS", () => {
  it("holds every dangerous file and folder of sandbox-runtime's own list, and git's hooks and config", () => {
    const ours = PROTECTED_PATHS.map((p) => p.path);
    for (const name of [...runtimeList(), ".git/hooks", ".git/config", ".claude/commands"])
      expect(protectedEntry(name), name).toBeDefined();
    expect(ours).toEqual(expect.arrayContaining([".envrc", ".npmrc", ".gitattributes", ".keel"]));
  });
  it("matches at any depth and below a protected folder; not look-alikes or the project's own files", () => {
    expect(protectedEntry(".vscode/tasks.json")?.path).toBe(".vscode");
    expect(protectedEntry("packages/app/.vscode/settings.json")?.path).toBe(".vscode");
    expect(protectedEntry("sub/.git/hooks/pre-commit")?.path).toBe(".git/hooks");
    expect(protectedEntry("./.mcp.json")?.path).toBe(".mcp.json");
    expect(protectedEntry("a\\.envrc")?.path).toBe(".envrc");
    expect(protectedEntry("sub/.git")?.path).toBe(".git");
    for (const ok of [
      "src/app.ts",
      "package.json",
      "Makefile",
      ".editorconfig",
      "vscode/x",
      ".mcp.json.bak",
      "docs/.gitignore",
    ])
      expect(protectedEntry(ok), ok).toBeUndefined();
    expect(isKeelOwn(".keel/undo/steps.jsonl")).toBe(true);
    expect(isKeelOwn("src/.keel")).toBe(false);
  });
});

describe("sandboxDenyPaths", () => {
  const WS = "/w";
  it("denies what exists, holds what does not with a folder placeholder, and leaves a missing .git to git init", () => {
    const exists = (rel: string) => [".vscode", ".git/hooks", ".git/config"].includes(rel);
    const withGit = sandboxDenyPaths(WS, exists, true, ["sub/.envrc"]);
    expect(withGit).toContain("/w/.vscode");
    expect(withGit).toContain("/w/.mcp.json/.keel-protected");
    expect(withGit).toContain("/w/.git/hooks");
    expect(withGit).toContain("/w/.git/info/attributes/.keel-protected");
    expect(withGit).toContain("/w/sub/.envrc");
    expect(withGit).not.toContain("/w/.git");
    const noGit = sandboxDenyPaths(WS, () => false, false);
    expect(noGit.some((p) => p.startsWith("/w/.git/"))).toBe(false);
    expect(noGit.length).toBe(COMMAND_PROTECTED.filter((p) => !p.startsWith(".git/")).length);
  });
});
