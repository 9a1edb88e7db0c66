import { mkdtempSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readInstructions } from "../../src/coder/instructions.js";

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
