/**
 * edit_file: one occurrence replaced, how it matched reported; a file not read, changed since, not
 * UTF-8 or too large refused; ambiguity named; write_file suggested where it is the better tool.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ToolContext } from "../../../src/tools/types.js";
import { tempWorkspace } from "../../support/harness.js";
import { editFileTool } from "../../../src/tools/edit-file.js";
import { contentHash } from "../../../src/tools/fs-tools.js";
import { run, context, runWithin, withBigFile, PY } from "../../support/tools.js";

describe("file tools", () => {
  it("edit_file replaces exactly one occurrence and refuses ambiguity", async () => {
    const ctx = context();
    writeFileSync(path.join(ctx.workspace, "a.txt"), "x = 1\ny = 1\n");
    expect(
      (await run("edit_file", { path: "a.txt", old_text: "= 1", new_text: "= 2" }, ctx)).ok,
    ).toBe(false);
    expect(
      (await run("edit_file", { path: "a.txt", old_text: "y = 1", new_text: "y = $&2" }, ctx)).ok,
    ).toBe(true);
    expect(readFileSync(path.join(ctx.workspace, "a.txt"), "utf8")).toBe("x = 1\ny = $&2\n");
  });
});

describe("a file that is not UTF-8", () => {
  it("read_file says so and where; edit_file refuses it and leaves every byte as it was", async () => {
    const ctx = context();
    const bytes = Buffer.from("caf\xe9 na\xefve bytes\n", "latin1");
    writeFileSync(path.join(ctx.workspace, "latin1.txt"), bytes);
    const read = await run("read_file", { path: "latin1.txt" }, ctx);
    expect(read.ok && read.output).toContain(
      "[latin1.txt is not UTF-8 text (byte 0xE9 at offset 3)",
    );
    const edit = await run(
      "edit_file",
      { path: "latin1.txt", old_text: "bytes", new_text: "BYTES" },
      { ...ctx, seen: read.ok ? read.seen : undefined },
    );
    expect(edit.ok).toBe(false);
    expect(!edit.ok && edit.message).toContain(
      "latin1.txt is not UTF-8 text (byte 0xE9 at offset 3)",
    );
    expect(readFileSync(path.join(ctx.workspace, "latin1.txt"))).toEqual(bytes);
    // UTF-8 text is read and edited as before
    writeFileSync(path.join(ctx.workspace, "u.txt"), "café bytes\n");
    const u = await run("read_file", { path: "u.txt" }, ctx);
    expect(u.ok && u.output).toBe("café bytes\n");
    expect(
      (await run("edit_file", { path: "u.txt", old_text: "bytes", new_text: "B" }, ctx)).ok,
    ).toBe(true);
  });
});

describe("a file too large to read whole (700 MB, sparse)", () => {
  it("edit_file refuses it at once", async () => {
    const ctx = withBigFile();
    const r = await runWithin(
      3000,
      "edit_file",
      { path: "src.log", old_text: "line 2", new_text: "x" },
      ctx,
    );
    expect(!r.ok && r.message).toContain("too large to edit");
  });
});

describe("edit_file", () => {
  const setup = (content: string, seen?: Record<string, string>) => {
    const workspace = tempWorkspace();
    writeFileSync(path.join(workspace, "a.py"), content);
    const ctx: ToolContext = {
      workspace,
      commandTimeoutMs: 5000,
      outputLimit: 4000,
      seen: seen ?? { "a.py": contentHash(content) },
    };
    const edit = (old_text: string, new_text: string, extra: Partial<ToolContext> = {}) =>
      editFileTool.run({ path: "a.py", old_text, new_text }, { ...ctx, ...extra });
    const disk = () => readFileSync(path.join(workspace, "a.py"), "utf8");
    return { ctx, edit, disk };
  };

  it("reports how it matched and what the model now knows of the file", async () => {
    const { edit, disk } = setup(PY);
    const r = await edit(
      "def count(self, items):\n    return len(items)",
      "def count(self):\n    return 0",
    );
    expect(r).toMatchObject({ ok: true, filesWritten: ["a.py"] });
    expect(r.ok && r.output).toBe(
      "edited a.py at lines 8-9 (matched after normalising indentation; new_text was re-indented to the file's)",
    );
    expect(disk()).toContain("    def count(self):\n        return 0\n");
    expect(r.ok && r.seen).toEqual({ "a.py": contentHash(disk()) });
  });

  it("refuses a file the thread has not read, and one changed on disk since", async () => {
    const { edit, disk, ctx } = setup(PY, {});
    const unread = await edit("s = 0", "s = 1");
    expect(unread).toMatchObject({ ok: false, kind: "refused" });
    expect(!unread.ok && unread.message).toContain(
      "call read_file on a.py first".replace("call", "Call"),
    );
    writeFileSync(path.join(ctx.workspace, "a.py"), PY + "# a person was here\n");
    const stale = await edit("s = 0", "s = 1", { seen: { "a.py": contentHash(PY) } });
    expect(!stale.ok && stale.message).toContain("changed on disk since it was last read");
    expect(disk()).toBe(PY + "# a person was here\n");
  });

  it("a file named constructor is unread until read (no key inherited from Object)", async () => {
    const { ctx } = setup(PY, {});
    writeFileSync(path.join(ctx.workspace, "constructor"), "x = 1\n");
    const r = await editFileTool.run(
      { path: "constructor", old_text: "x = 1", new_text: "x = 2" },
      ctx,
    );
    expect(!r.ok && r.message).toContain("constructor has not been read in this conversation");
  });

  it("names both places of an ambiguous edit and changes nothing", async () => {
    const { edit, disk } = setup(PY);
    const r = await edit("return", "yield");
    expect(!r.ok && r.message).toContain(
      "matches 2 places in a.py (line 6 and line 9, matching exactly)",
    );
    expect(disk()).toBe(PY);
  });

  it("steers to write_file: small files at once, any file after a failed edit", async () => {
    const { edit } = setup(PY);
    const small = await edit("nothing like it", "x");
    expect(!small.ok && small.message).toContain("a.py is small (10 lines): write_file");
    const big = setup(PY.repeat(10).replaceAll("class Shop", "class Shop2"));
    const again = await big.edit("nothing like it", "x", { failuresOnTarget: 1 });
    expect(!again.ok && again.message).toContain(
      'Editing a.py has failed before: call write_file with path "a.py"',
    );
  });
});
