/** A manifest read back from the shared store: its entries checked one by one. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkManifest, isInsidePath, ManifestError } from "../../../src/analyst/manifest.js";

const sha = (s: string) => createHash("sha1").update(s).digest("hex");
const H = sha("x");
const file = (path: string, hash = H) => ({ path, hash, bytes: 1, lines: 1, language: "ts" });

describe("a manifest read back from the store", () => {
  const manifest = (rows: unknown[]) => ({
    id: "m1",
    target: "/repo",
    files: rows,
    folders: ["a", ".", "../up"],
    merkles: {},
    skipped: {},
    model: null,
  });

  it("keeps the entries keel wrote and names the others: out of the target, malformed", () => {
    const m = checkManifest(
      manifest([file("a/x.ts"), file("../secret.ts"), { path: 42 }, null, file("a/y.ts", "no")]),
      "t",
    );
    expect(m.files.map((f) => f.path)).toEqual(["a/x.ts"]);
    expect(m.folders).toEqual(["a", "."]);
    expect(m.refused).toEqual([
      '"../secret.ts": not a path inside the analysed folder',
      "entry 2: no path",
      "entry 3: not an entry",
      '"a/y.ts": not a sha1',
      'folder "../up": not a folder inside the analysed folder',
    ]);
  });

  it("is refused whole when it is not a manifest", () => {
    expect(() => checkManifest({ files: "x" }, "t")).toThrow(ManifestError);
    expect(() => checkManifest(null, "t")).toThrow(/not one keel wrote/);
  });

  it("paths inside: names, none empty, . or ..", () => {
    expect(["a", "a/b", ".a", "a..b", "..a/b"].map(isInsidePath)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(
      ["", "..", ".", "/a", "a/", "a//b", "a/./b", "a/../b", "a\0b"].map(isInsidePath),
    ).toEqual(Array(9).fill(false));
  });
});
