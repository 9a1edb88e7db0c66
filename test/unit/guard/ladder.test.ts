/** The recovery ladder: hint, re-plan, summary, then the end (or a person). */
import { describe, expect, it } from "vitest";
import { decideRecovery } from "../../../src/guard/ladder.js";

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
