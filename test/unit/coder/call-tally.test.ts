/** The kinds of repair a call's notes name. */
import { describe, expect, it } from "vitest";
import { repairKind } from "../../../src/coder/call-tally.js";

describe("repairKind", () => {
  it("classify repair notes by kind", () => {
    expect(
      [
        "called list_dir for ls",
        "used file_path as path",
        "parsed the arguments from a JSON string",
        'limit: "5" → 5',
        "?",
      ].map(repairKind),
    ).toEqual(["tool name", "field alias", "JSON string", "type", "other"]);
  });
});
