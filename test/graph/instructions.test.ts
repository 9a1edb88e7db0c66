/** Project instructions (AGENTS.md, else CLAUDE.md or GEMINI.md) in every turn's system prompt, capped and stable. */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { instructionsBlock } from "../../src/coder/instructions.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  runCoder,
  tempWorkspace,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();
const script = keelScript((req) =>
  req.turn === 0
    ? calls(call("write_file", { path: "a.py", content: "x = 1\n" }))
    : { content: "Done." },
);

const systemPrompts = (bodies: Array<{ messages?: Array<{ role: string; content: string }> }>) =>
  bodies.map((b) => b.messages?.find((m) => m.role === "system")?.content ?? "");

describe("project instructions", () => {
  it("AGENTS.md reaches every turn (planner and actor) in the same system prompt", async () => {
    const fake = await startFake({ script });
    const ws = tempWorkspace();
    writeFileSync(
      path.join(ws, "AGENTS.md"),
      "# Conventions\nUse 4-space indents. Name tests test_*.py.\n",
    );
    writeFileSync(path.join(ws, "CLAUDE.md"), "IGNORED WHEN AGENTS.md EXISTS");
    await runCoder(fake, "Create a.py", { workspace: ws });
    const prompts = systemPrompts(fake.chatBodies());
    expect(prompts.length).toBeGreaterThanOrEqual(3); // plan + two act turns
    for (const p of prompts) {
      expect(p).toContain('<project_instructions file="AGENTS.md">');
      expect(p).toContain("Name tests test_*.py.");
      expect(p).not.toContain("IGNORED");
    }
    expect(new Set(prompts).size).toBe(1); // one prefix for the whole run
  });

  it("falls back to CLAUDE.md, then GEMINI.md; none → no section", async () => {
    const fake = await startFake({ script });
    const ws = tempWorkspace();
    writeFileSync(path.join(ws, "GEMINI.md"), "Prefer pathlib.");
    await runCoder(fake, "Create a.py", { workspace: ws });
    expect(systemPrompts(fake.chatBodies())[0]).toContain('file="GEMINI.md"');
    const bare = await startFake({ script });
    await runCoder(bare, "Create a.py", { workspace: tempWorkspace() });
    expect(systemPrompts(bare.chatBodies())[0]).not.toContain("project_instructions");
  });

  it("is capped to a share of the window, cut on a line with a note", () => {
    const text = Array.from({ length: 400 }, (_, i) => `- rule ${i}: keep it short`).join("\n");
    const block = instructionsBlock("AGENTS.md", text, 1000);
    expect(block.length).toBeLessThan(1200);
    expect(block).toMatch(
      /- rule \d+: keep it short\n\[\.\.\. AGENTS\.md cut here: \d+ characters in all/,
    );
  });
});
