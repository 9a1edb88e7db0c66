/** The stand-ins that hold missing protected paths during a command, left out of what it prints. */
import { describe, expect, it } from "vitest";
import { sandboxDenyPaths } from "../../../src/sandbox/protected.js";
import { standIns, withoutStandIns } from "../../../src/sandbox/stand-ins.js";

describe("withoutStandIns", () => {
  const WS = "/w";
  const held = standIns(
    WS,
    sandboxDenyPaths(WS, () => false, false),
  );
  /** The workspace's top level during the command: its files, and the stand-ins. */
  const top = ["app.py", "node_modules", "src", ...held];
  const show = (output: string) => withoutStandIns(output, held, WS, [], top);
  it("the stand-ins are the missing entries held by a placeholder folder", () => {
    expect(held).toContain(".vscode");
    expect(held).toContain(".Rprofile");
    expect(held).not.toContain(".hg/hgrc"); // missing, inside a folder: not held
  });
  it("leaves out their lines in ls -l, find (relative and absolute), du and tree listings", () => {
    const out = [
      "drwx------ 64 ann ann 4096 Nov 25 08:21 .",
      "drwx------  2 ann ann 4096 Nov 25 08:21 .vscode",
      "-rw-r--r--  1 ann ann   12 Nov 25 08:21 app.py",
      "./.mcp.json",
      "./app.py",
      "/w/.envrc",
      "4\t./.kiro",
      "├── .idea",
      "└── app.py",
      "`-- .claude",
      "    ├── .zed",
    ].join("\n");
    expect(show(out).split("\n")).toEqual([
      "drwx------ 64 ann ann 4096 Nov 25 08:21 .",
      "-rw-r--r--  1 ann ann   12 Nov 25 08:21 app.py",
      "./app.py",
      "└── app.py",
      "    ├── .zed", // a folder deeper in the tree: not the stand-in
    ]);
  });
  it("an ls line naming a protected folder that really stands deeper stays (it may list that one)", () => {
    const out = "drwx------  2 ann ann 4096 Nov 25 08:21 .vscode\n./.vscode\n./pkg/.vscode";
    expect(withoutStandIns(out, held, WS, ["pkg/.vscode"])).toBe(
      "drwx------  2 ann ann 4096 Nov 25 08:21 .vscode\n./pkg/.vscode",
    );
  });
  it("bare names only in a listing of the top level (ls, ls -a); a file's lines are kept", () => {
    const ls = [".", "..", ...held.slice(0, 12), "app.py"].join("\n");
    expect(show(ls)).toBe([".", "..", "app.py"].join("\n"));
    // plain ls: the stand-ins without a leading dot, all of them
    const plain = held.filter((n) => !n.startsWith("."));
    expect(plain).toEqual(["mise.toml"]);
    expect(show(["app.py", "mise.toml", "src/"].join("\n"))).toBe("app.py\nsrc/");
    // not a listing of the top level: a line that is no entry there, or no entry at all
    expect(show("src/app.py\nmise.toml")).toBe("src/app.py\nmise.toml"); // git diff --name-only
    expect(show("mise.toml")).toBe("mise.toml");
    expect(show("*.log\nmise.toml\napp.py")).toBe("*.log\nmise.toml\napp.py");
    // ls -R: an empty folder's part goes with its heading
    const recursive = [".:", "app.py", ...plain, "", `./${plain[0]}:`, "", "./src:", "x.ts"];
    expect(show(recursive.join("\n"))).toBe([".:", "app.py", "", "./src:", "x.ts"].join("\n"));
    const gitignore = ["node_modules", ".vscode/", ".idea", ".envrc", "dist"].join("\n");
    expect(show(gitignore)).toBe(gitignore);
    expect(show("- .vscode is ignored\n.vscode")).toBe("- .vscode is ignored\n.vscode");
    expect(withoutStandIns("./.vscode", [], WS)).toBe("./.vscode");
  });
});
