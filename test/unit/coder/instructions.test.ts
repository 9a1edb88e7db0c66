/** The project instructions: read from the workspace's listing, and never through a link out. */
import { mkdtempSync, writeFileSync, mkdirSync, symlinkSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, beforeAll } from "vitest";
import { readInstructions } from "../../../src/coder/instructions.js";
import { SECRET, linkedWorkspace } from "../../support/links.js";

const workspace = (files: Record<string, string>) => {
  const dir = mkdtempSync(path.join(tmpdir(), "keel-instructions-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
};

describe("readInstructions with the workspace's listing", () => {
  it("reads the first instruction file the listing has, as without one", async () => {
    const dir = workspace({ "CLAUDE.md": "use tabs", "GEMINI.md": "use spaces" });
    const listed = await readInstructions(dir, 16_384, await readdir(dir));
    expect(listed).toBe(await readInstructions(dir, 16_384));
    expect(listed).toContain('file="CLAUDE.md"');
    expect(listed).toContain("use tabs");
  });

  it("does not look for a file the listing lacks", async () => {
    const dir = workspace({ "AGENTS.md": "rules" });
    expect(await readInstructions(dir, 16_384, ["README.md"])).toBe("");
    expect(await readInstructions(dir, 16_384, ["agents.md"])).toContain("rules");
  });
});

let root: string;
beforeAll(() => {
  root = linkedWorkspace().root;
});

describe("walks never follow a link out", () => {
  it("project instructions are not read through a link out (AGENTS.md → a secret)", async () => {
    const other = path.join(root, "other-ws");
    mkdirSync(other);
    symlinkSync(path.join(root, "secret.txt"), path.join(other, "AGENTS.md"));
    writeFileSync(path.join(other, "CLAUDE.md"), "Use tabs.");
    const text = await readInstructions(other, 16_384);
    expect(text).not.toContain(SECRET);
    expect(text).toContain("Use tabs.");
  });
});
