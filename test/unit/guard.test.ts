import { describe, expect, it } from "vitest";
import { decideRecovery } from "../../src/guard/ladder.js";
import { checkRepeat, type TrailEntry } from "../../src/guard/loop.js";
import { callSignature, normalisePath } from "../../src/guard/signature.js";

const entry = (
  name: string,
  args: Record<string, unknown>,
  toolClass: TrailEntry["toolClass"] = "explore",
): TrailEntry => ({
  id: Math.random().toString(36),
  name,
  signature: callSignature(name, args),
  toolClass,
  ok: true,
});

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

describe("checkRepeat", () => {
  it("ls ./src, ls ./src/cli, ls ./src/tui is not a loop", () => {
    const trail = [entry("list_dir", { path: "./src" }), entry("list_dir", { path: "./src/cli" })];
    expect(
      checkRepeat(trail, callSignature("list_dir", { path: "./src/tui" }), "explore").hit,
    ).toBe(false);
  });
  it("ls .\\src, ls ./src, ls src/ is a loop at the third call", () => {
    const trail = [entry("list_dir", { path: ".\\src" }), entry("list_dir", { path: "./src" })];
    expect(checkRepeat(trail, callSignature("list_dir", { path: "src/" }), "explore")).toEqual({
      repeats: 3,
      threshold: 3,
      hit: true,
    });
    expect(
      checkRepeat(trail.slice(1), callSignature("list_dir", { path: "src/" }), "explore").hit,
    ).toBe(false);
  });
  it("mutations hit at two identical calls", () => {
    const w = entry("write_file", { path: "a", content: "x" }, "mutate");
    expect(checkRepeat([w], w.signature, "mutate").hit).toBe(true);
    expect(checkRepeat([], w.signature, "mutate").hit).toBe(false);
  });
  it("an interleaved different call resets the count", () => {
    const a = entry("list_dir", { path: "src" });
    const b = entry("read_file", { path: "src/a.ts" });
    expect(checkRepeat([a, a, b], a.signature, "explore").repeats).toBe(1);
  });
});

describe("decideRecovery", () => {
  it("climbs hint → replan → end for repeatable failures", () => {
    expect([1, 2, 3].map((s) => decideRecovery("empty", s, false))).toEqual([
      "hint",
      "replan",
      "end",
    ]);
    expect([1, 2, 3].map((s) => decideRecovery("tool_error", s, true))).toEqual([
      "hint",
      "replan",
      "ask",
    ]);
  });
  it("ends a loop at its second hit and a spent budget at once", () => {
    expect(decideRecovery("loop", 1, false)).toBe("end");
    expect(decideRecovery("loop", 1, true)).toBe("ask");
    expect(decideRecovery("budget", 1, true)).toBe("end");
  });
});
