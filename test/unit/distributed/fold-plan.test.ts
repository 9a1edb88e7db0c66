/** The fold plan: when a folder is ready to summarise. */
import { describe, expect, it } from "vitest";
import { FoldPlan } from "../../../src/distributed/fold-plan.js";

describe("fold plan", () => {
  const files = ["a/x.ts", "a/b/y.ts", "a/b/z.ts", "c/w.ts", "top.ts"];
  const folders = ["a/b", "a", "c", "."];

  it("a folder is ready once its files and subfolders are done; the root last", () => {
    const p = new FoldPlan(files, folders);
    expect(p.initiallyReady()).toEqual([]);
    expect(p.unitDone("a/b/y.ts")).toEqual([]);
    expect(p.unitDone("a/x.ts")).toEqual([]); // a waits for a/b
    expect(p.unitDone("a/b/z.ts")).toEqual(["a/b"]);
    expect(p.folderDone("a/b")).toEqual(["a"]);
    expect(p.unitDone("top.ts")).toEqual([]);
    expect(p.folderDone("a")).toEqual([]);
    expect(p.unitDone("c/w.ts")).toEqual(["c"]);
    expect(p.folderDone("c")).toEqual(["."]);
    expect(p.folderDone(".")).toEqual([]);
  });

  it("a folder holding only subfolders waits for them", () => {
    const p = new FoldPlan(["src/a/x.ts"], ["src/a", "src", "."]);
    expect(p.unitDone("src/a/x.ts")).toEqual(["src/a"]);
    expect(p.folderDone("src/a")).toEqual(["src"]);
    expect(p.folderDone("src")).toEqual(["."]);
  });
});
