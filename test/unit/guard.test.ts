import { describe, expect, it } from "vitest";
import { decideRecovery } from "../../src/guard/ladder.js";
import { callSignature, normalisePath } from "../../src/guard/signature.js";

describe("normalisePath", () => {
  it.each([
    [".\\src", "src"],
    ["./src", "src"],
    ["src/", "src"],
    ["src", "src"],
    ["./src/./cli/", "src/cli"],
    ["src\\cli\\..\\tui", "src/tui"],
    [".", "."],
    ["./", "."],
    ["", "."],
    ["/abs/path/", "/abs/path"],
  ])("%j → %j", (input, expected) => expect(normalisePath(input)).toBe(expected));
});

describe("callSignature", () => {
  it("is the same for the same call whatever the key order and path spelling", () => {
    expect(callSignature("grep", { path: ".\\src", pattern: "x" })).toBe(
      callSignature("grep", { pattern: "x", path: "src/" }),
    );
  });
  it("differs for different paths and different tools", () => {
    expect(callSignature("list_dir", { path: "src" })).not.toBe(
      callSignature("list_dir", { path: "src/cli" }),
    );
    expect(callSignature("list_dir", { path: "src" })).not.toBe(
      callSignature("read_file", { path: "src" }),
    );
  });
  it("hashes long strings so signatures stay short", () => {
    const sig = callSignature("write_file", { path: "a", content: "x".repeat(10_000) });
    expect(sig.length).toBeLessThan(120);
    expect(sig).not.toBe(callSignature("write_file", { path: "a", content: "y".repeat(10_000) }));
  });
});

describe("decideRecovery", () => {
  const ladder = { hints: 1, replans: 1, interactive: false };
  it("climbs hint → replan → summarize, then ends (or asks a person)", () => {
    expect([1, 2, 3].map((n) => decideRecovery("empty", n, ladder))).toEqual([
      "hint",
      "replan",
      "summarize",
    ]);
    expect(decideRecovery("empty", 3, ladder, true)).toBe("end");
    expect(decideRecovery("tool_error", 3, { ...ladder, interactive: true }, true)).toBe("ask");
  });
  it("follows the configured number of hints and re-plans", () => {
    const wide = { hints: 2, replans: 2, interactive: false };
    expect([1, 2, 3, 4, 5].map((n) => decideRecovery("prose", n, wide))).toEqual([
      "hint",
      "hint",
      "replan",
      "replan",
      "summarize",
    ]);
    expect(decideRecovery("prose", 1, { hints: 0, replans: 0, interactive: false })).toBe(
      "summarize",
    );
  });
  it("starts a loop past its hint (the hint was the tool result) and sends a spent budget to the summary", () => {
    expect([1, 2].map((n) => decideRecovery("loop", n, ladder))).toEqual(["replan", "summarize"]);
    expect(decideRecovery("budget", 1, { ...ladder, interactive: true })).toBe("summarize");
    expect(decideRecovery("budget", 1, { ...ladder, interactive: true }, true)).toBe("end");
  });
});
