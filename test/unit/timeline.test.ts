/** The timeline names each failure kind of a turn as what it is (it printed "prose instead of action" for all). */
import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { FailureSchema } from "../../src/agent/state.js";
import { describeUpdate, FAILURE_LABEL } from "../../src/session/timeline.js";

describe("describeUpdate for act", () => {
  it.each([
    ["unparseable", /a tool call keel could not read/],
    ["repetition", /the model repeats itself/],
    ["prose", /prose instead of action/],
    ["empty", /empty reply/],
  ] as const)("%s", (kind, label) => {
    const lines = describeUpdate("act", {
      messages: [new AIMessage({ content: "<tool_call>{oops" })],
      turns: 2,
      failure: { kind, detail: "x" },
    });
    expect(lines.join("\n")).toMatch(label);
    if (kind !== "prose") expect(lines.join("\n")).not.toMatch(/prose instead of action/);
  });

  it("has a label for every failure kind", () => {
    expect(Object.keys(FAILURE_LABEL).sort()).toEqual([...FailureSchema.shape.kind.options].sort());
  });
});
