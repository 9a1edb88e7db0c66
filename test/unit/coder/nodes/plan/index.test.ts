import { describe, expect, it } from "vitest";
import { withoutNumbers } from "../../../../../src/coder/nodes/plan/index.js";

describe("plan steps as the model writes them", () => {
  it("lose the list markers it copied from the plan it was shown, not numbers that are content", () => {
    expect(
      withoutNumbers([
        "1. 1. 1. Create a.txt",
        "2) Run tests",
        "- [x] Read it",
        "3.14 is pi",
        "1.",
      ]),
    ).toEqual(["Create a.txt", "Run tests", "Read it", "3.14 is pi"]);
    expect(withoutNumbers(["1.", " - "])).toBeUndefined();
  });
});
