/**
 * The file tools (read_file, write_file): lines paged, folders made; a FIFO refused at once by
 * every file tool; a file too large to read whole read by offset and limit; links never followed out.
 */
import { readFileSync, writeFileSync, existsSync, linkSync, statSync } from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { run, context, runWithin, withBigFile } from "../../support/tools.js";
import { linkedTools, text } from "../../support/links.js";

describe("file tools", () => {
  it("read_file pages by lines and points folders at list_dir", async () => {
    const ctx = context();
    writeFileSync(path.join(ctx.workspace, "n.txt"), "1\n2\n3\n4\n5");
    const r = await run("read_file", { path: "n.txt", offset: 2, limit: 2 }, ctx);
    expect(r).toMatchObject({ ok: true, output: "[lines 2-3 of 5]\n2\n3" });
    const dir = await run("read_file", { path: "." }, ctx);
    expect(!dir.ok && dir.message).toContain("call list_dir");
  });

  it("write_file creates parent folders", async () => {
    const ctx = context();
    const r = await run("write_file", { path: "deep/er/x.js", content: "1" }, ctx);
    expect(r).toMatchObject({ ok: true, filesWritten: ["deep/er/x.js"] });
    expect(readFileSync(path.join(ctx.workspace, "deep/er/x.js"), "utf8")).toBe("1");
  });
});

describe.skipIf(process.platform === "win32")("a named pipe (FIFO) in the workspace", () => {
  const withFifo = () => {
    const ctx = context();
    execFileSync("mkdir", ["-p", path.join(ctx.workspace, "src")]);
    execFileSync("mkfifo", [path.join(ctx.workspace, "src/pipe")]);
    return ctx;
  };
  it("read_file, write_file and edit_file refuse it at once, saying what it is", async () => {
    const ctx = withFifo();
    for (const [name, args] of [
      ["read_file", { path: "src/pipe" }],
      ["write_file", { path: "src/pipe", content: "x" }],
      ["edit_file", { path: "src/pipe", old_text: "a", new_text: "b" }],
      ["grep", { pattern: "x", path: "src/pipe" }],
      ["analyze_code", { path: "src/pipe" }],
    ] as const) {
      const r = await runWithin(2000, name, args, ctx);
      expect(r).toMatchObject({ ok: false, kind: "refused" });
      expect(!r.ok && r.message).toContain("src/pipe is a named pipe (FIFO), not a regular file");
    }
  });
  it("grep and analyze_code over the folder skip it and search the rest", async () => {
    const ctx = withFifo();
    writeFileSync(path.join(ctx.workspace, "src/a.ts"), "export const findMe = 1;\n");
    execFileSync("mkfifo", [path.join(ctx.workspace, "src/b.ts")]);
    expect(await runWithin(5000, "grep", { pattern: "findMe" }, ctx)).toEqual({
      ok: true,
      output: "src/a.ts:1: export const findMe = 1;",
    });
    const a = await runWithin(5000, "analyze_code", { path: "src" }, ctx);
    expect(a.ok && a.output).toContain("src/a.ts: typescript");
  });
});

describe("a file too large to read whole (700 MB, sparse)", () => {
  it("read_file with offset/limit reads only those lines, quickly", async () => {
    const ctx = withBigFile();
    const r = await runWithin(3000, "read_file", { path: "src.log", offset: 2, limit: 3 }, ctx);
    expect(r.ok && r.output).toBe(
      `[lines 2-4; src.log is ${700 * 1024 * 1024} bytes, too large to read whole; read it with offset/limit]\nline 2\nline 3\nline 4`,
    );
  });

  it("a whole read, or a line longer than the output limit, is cut at the limit and says how to read on", async () => {
    const ctx = withBigFile();
    for (const args of [{ path: "src.log" }, { path: "src.log", offset: 11, limit: 5 }]) {
      const r = await runWithin(3000, "read_file", args, ctx);
      expect(r.ok && r.output).toContain("too large to read whole; read it with offset/limit");
      expect(r.ok && r.output).toContain("[truncated at 4000 characters");
      expect(r.ok && r.output.length).toBeLessThan(4400);
    }
  });

  it("an offset past the end says how many lines there are", async () => {
    const ctx = withBigFile();
    const r = await runWithin(10_000, "read_file", { path: "src.log", offset: 20, limit: 2 }, ctx);
    expect(r.ok && r.output).toContain("It has 11 lines: offset 20 is past its end");
  });
});

describe("files of ordinary size read as before", () => {
  it("a whole read and a trailing newline", async () => {
    const ctx = context();
    writeFileSync(path.join(ctx.workspace, "a.txt"), "a\nb\n");
    expect(await runWithin(2000, "read_file", { path: "a.txt" }, ctx)).toMatchObject({
      ok: true,
      output: "a\nb\n",
    });
    const w = await runWithin(2000, "write_file", { path: "a.txt", content: "c\n" }, ctx);
    expect(w).toMatchObject({ ok: true, output: "overwrote a.txt (2 bytes)" });
    expect(readFileSync(path.join(ctx.workspace, "a.txt"), "utf8")).toBe("c\n");
  });
});

const { run: runLinked, made } = linkedTools();

describe("file tools act on the real path", () => {
  it("writing through a dangling link creates nothing outside", async () => {
    const r = await runLinked("write_file", { path: "dangling.txt", content: "x" });
    expect(r.ok).toBe(false);
    expect(text(r)).toMatch(/leads nowhere/);
    expect(existsSync(path.join(made().root, "created-through-link.txt"))).toBe(false);
    expect((await runLinked("write_file", { path: "dangling.txt/x", content: "x" })).ok).toBe(
      false,
    );
  });

  it("a chain of links that ends outside is refused", async () => {
    for (const p of ["chain2/secret.txt", "chain2", "chain1/secret.txt"]) {
      expect((await runLinked("read_file", { path: p })).ok, p).toBe(false);
      expect((await runLinked("list_dir", { path: p })).ok, p).toBe(false);
    }
  });
});

describe("hard links", () => {
  it("a hard link shares its file: it cannot be made to a file outside the sandbox's view", () => {
    // A hard link is the same file under a second name, so no tool can tell it from an ordinary
    // one. What holds: a command cannot make one to a file outside (the sandbox shows none of
    // them, and link() across its mounts fails), so here it is made by the test, as a person
    // could, and it reads as the workspace's own file.
    const { ws } = made();
    linkSync(path.join(ws, "src", "a.ts"), path.join(ws, "hard.ts"));
    expect(readFileSync(path.join(ws, "hard.ts"), "utf8")).toContain("const a");
    expect(statSync(path.join(ws, "hard.ts")).nlink).toBe(2);
  });
});
