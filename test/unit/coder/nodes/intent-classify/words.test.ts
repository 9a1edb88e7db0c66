/** GO_ON: a follow-up that only says to go on. */
import { describe, expect, it } from "vitest";
import { GO_ON } from "../../../../../src/coder/nodes/intent-classify/words.js";

describe("GO_ON: a follow-up that only says to go on", () => {
  it.each([
    "continue",
    "ok, continue",
    "Keep going please",
    "try again",
    "weiter",
    "continúa.",
    "go on!",
  ])("goes on: %s", (text) => expect(GO_ON.test(text)).toBe(true));
  it.each([
    "continue the parser so it handles errors",
    "go on and explain the cache",
    "try again with a smaller file",
    "resume the download in fetch.ts",
  ])("is a request of its own: %s", (text) => expect(GO_ON.test(text)).toBe(false));
});
