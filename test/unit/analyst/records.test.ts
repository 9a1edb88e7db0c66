/** The analyst's folder hashes, computed in one pass. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { folderIndex, merkles } from "../../../src/analyst/records.js";

const sha = (s: string) => createHash("sha1").update(s).digest("hex");
const H = sha("x");
const file = (path: string, hash = H) => ({ path, hash, bytes: 1, lines: 1, language: "ts" });

describe("folder hashes", () => {
  const files = [file("a/x.ts"), file("a/b/y.ts", sha("y")), file("top.ts")];
  const folders = ["a/b", "a", "."];

  it("are computed in one pass and cover everything below", () => {
    const m = merkles(files, folders);
    expect(Object.keys(m).sort()).toEqual([".", "a", "a/b"]);
    const changed = merkles([files[0]!, file("a/b/y.ts", sha("y2")), files[2]!], folders);
    expect(changed["a/b"]).not.toBe(m["a/b"]);
    expect(changed.a).not.toBe(m.a);
    expect(changed["."]).not.toBe(m["."]);
    const index = folderIndex(files, folders);
    expect(index.files.get("a")!.map((f) => f.path)).toEqual(["a/x.ts"]);
    expect(index.subfolders.get(".")).toEqual(["a"]);
  });
});
