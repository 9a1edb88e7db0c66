/**
 * keel's one file door (`src/files/door.ts`): what a workspace can hold under a name keel opens — a
 * link (at the file or on the way), a FIFO, a device, a file too large, another name of a
 * hard-linked file — is refused or written around, at once, and nothing outside is touched.
 */
import { execFileSync } from "node:child_process";
import {
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
  chmodSync,
} from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  FileRefused,
  readIn,
  readInSync,
  readSmall,
  writeIn,
  type RefusalReason,
} from "../../../src/files/door.js";
import { tempWorkspace } from "../../support/harness.js";

let root: string;
let ws: string;

beforeEach(() => {
  root = tempWorkspace("keel-door-");
  ws = path.join(root, "ws");
  mkdirSync(ws);
  writeFileSync(path.join(root, "secret.txt"), "SECRET\n");
});

/** The reason the door refused `op`, or "ok"/"none" when it did not. */
async function reasonOf(op: () => unknown): Promise<RefusalReason | "ok" | "none"> {
  try {
    const got = await op();
    return got === undefined ? "none" : "ok";
  } catch (e) {
    if (e instanceof FileRefused) return e.reason;
    throw e;
  }
}

describe("reading through the door", () => {
  it("reads a regular file, and says none for a missing one", async () => {
    writeFileSync(path.join(ws, "a.txt"), "hello\n");
    expect((await readIn(ws, "a.txt"))?.toString()).toBe("hello\n");
    expect(readInSync(ws, "a.txt")?.toString()).toBe("hello\n");
    expect(await readIn(ws, "missing.txt")).toBeUndefined();
    expect(await readIn(ws, "no/such/folder.txt")).toBeUndefined();
  });

  it("follows no link: not at the file, not on the way", async () => {
    symlinkSync(path.join(root, "secret.txt"), path.join(ws, "AGENTS.md"));
    symlinkSync(root, path.join(ws, "up"));
    symlinkSync(path.join(root, "gone"), path.join(ws, "dangling"));
    for (const rel of ["AGENTS.md", "up/secret.txt", "dangling"]) {
      expect(await reasonOf(() => readIn(ws, rel)), rel).toBe("link");
      expect(await reasonOf(() => readInSync(ws, rel)), rel).toBe("link");
    }
    expect(await reasonOf(() => readIn(ws, "../secret.txt"))).toBe("outside");
  });

  it("refuses a FIFO at once, also behind a link, never waiting for a writer", async () => {
    mkdirSync(path.join(ws, "node_modules"));
    execFileSync("mkfifo", [path.join(ws, "node_modules/pipe")]);
    symlinkSync("node_modules/pipe", path.join(ws, ".gitignore"));
    expect(await reasonOf(() => readIn(ws, "node_modules/pipe"))).toBe("not_file");
    expect(await reasonOf(() => readInSync(ws, "node_modules/pipe"))).toBe("not_file");
    expect(await reasonOf(() => readIn(ws, ".gitignore"))).toBe("link");
    expect(readSmall(path.join(ws, ".gitignore"))).toBeUndefined();
    expect(await reasonOf(() => readIn(ws, "node_modules"))).toBe("not_file");
  });

  it("refuses a file larger than asked, and reads one within it", async () => {
    writeFileSync(path.join(ws, "big.txt"), "x".repeat(2048));
    expect(await reasonOf(() => readIn(ws, "big.txt", { maxBytes: 1024 }))).toBe("too_large");
    expect(await reasonOf(() => readInSync(ws, "big.txt", { maxBytes: 1024 }))).toBe("too_large");
    expect((await readIn(ws, "big.txt", { maxBytes: 2048 }))?.length).toBe(2048);
  });
});

describe("writing through the door", () => {
  it("writes a new file, making its folders, and leaves no temporary file", async () => {
    await writeIn(ws, "src/api/users.js", "export {};\n", { makeParents: true });
    expect(readFileSync(path.join(ws, "src/api/users.js"), "utf8")).toBe("export {};\n");
    expect(readdirSync(path.join(ws, "src/api"))).toEqual(["users.js"]);
  });

  it("refuses a link at the name or on the way, and writes nothing through it", async () => {
    mkdirSync(path.join(ws, ".keel"));
    symlinkSync(path.join(root, "secret.txt"), path.join(ws, ".keel/report.md"));
    symlinkSync(root, path.join(ws, "up"));
    symlinkSync(path.join(root, "made-by-link.txt"), path.join(ws, "dangling"));
    expect(await reasonOf(() => writeIn(ws, ".keel/report.md", "x"))).toBe("link");
    expect(await reasonOf(() => writeIn(ws, "up/secret.txt", "x"))).toBe("link");
    expect(await reasonOf(() => writeIn(ws, "up/new/x.txt", "x", { makeParents: true }))).toBe(
      "link",
    );
    expect(await reasonOf(() => writeIn(ws, "dangling", "x"))).toBe("link");
    expect(readFileSync(path.join(root, "secret.txt"), "utf8")).toBe("SECRET\n");
    expect(readdirSync(root).sort()).toEqual(["secret.txt", "ws"]);
    expect(readdirSync(path.join(ws, ".keel"))).toEqual(["report.md"]);
  });

  it("refuses a FIFO at the name without waiting, and leaves it", async () => {
    execFileSync("mkfifo", [path.join(ws, "pipe")]);
    expect(await reasonOf(() => writeIn(ws, "pipe", "x"))).toBe("not_file");
    expect(statSync(path.join(ws, "pipe")).isFIFO()).toBe(true);
    expect(readdirSync(ws)).toEqual(["pipe"]);
  });

  it("leaves a read-only file as it is", async () => {
    writeFileSync(path.join(ws, "locked.txt"), "keep\n");
    chmodSync(path.join(ws, "locked.txt"), 0o444);
    expect(await reasonOf(() => writeIn(ws, "locked.txt", "changed\n"))).toBe("read_only");
    expect(readFileSync(path.join(ws, "locked.txt"), "utf8")).toBe("keep\n");
  });

  it("replaces a hard-linked file under its own name only, keeping its mode", async () => {
    writeFileSync(path.join(ws, "run.sh"), "echo old\n");
    chmodSync(path.join(ws, "run.sh"), 0o750);
    linkSync(path.join(ws, "run.sh"), path.join(root, "other-name.sh"));
    await writeIn(ws, "run.sh", "echo new\n");
    expect(readFileSync(path.join(ws, "run.sh"), "utf8")).toBe("echo new\n");
    expect(statSync(path.join(ws, "run.sh")).mode & 0o777).toBe(0o750);
    expect(readFileSync(path.join(root, "other-name.sh"), "utf8")).toBe("echo old\n");
  });
});

describe("readSmall", () => {
  it("keel never reads a kernel file a command links to (it would block and drain it)", () => {
    const w = path.join(tempWorkspace("keel-links-kmsg-"), "ws");
    mkdirSync(w, { recursive: true });
    symlinkSync("/proc/kmsg", path.join(w, "k"));
    expect(readSmall(path.join(w, "k"))).toBeUndefined();
    writeFileSync(path.join(w, "ok"), "fine");
    expect(readSmall(path.join(w, "ok"))).toBe("fine");
  });
});
