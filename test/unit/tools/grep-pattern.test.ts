/** grep's patterns on RE2: what is linear runs (issue 45). */
import { describe, expect, it } from "vitest";
import { grepSource } from "../../../src/tools/grep-pattern.js";

describe("grep, in linear time", () => {
  it("runs what is linear: classes, lookbehind, \\k as a letter where no group is named", () => {
    expect(grepSource("(?<=con)tent\\s+of")).toHaveProperty("source");
    expect(grepSource("\\k")).toHaveProperty("source");
  });
});
