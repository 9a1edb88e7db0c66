/** A call's signature: its path spelt one way, its keys in one order, long strings hashed. */
import { describe, expect, it } from "vitest";
import { callSignature, normalisePath } from "../../../src/guard/signature.js";

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
