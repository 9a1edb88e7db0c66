/** Generation budgets: per call kind, a reply cut at one and what was cut, and a budget that fits the window. */
import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import {
  cutAtBudget,
  describeCut,
  GenerationBudgetSchema,
  fittedBudget,
} from "../../../src/models/budget.js";
import { keptRaw } from "../../../src/models/reply-facts.js";

describe("generation budget", () => {
  it("defaults per call kind; a setting overrides one kind and keeps the others", () => {
    expect(GenerationBudgetSchema.parse(undefined)).toEqual({
      classify: 256,
      plan: 1024,
      act: 8192,
      summary: 1024,
      analyze: 2048,
    });
    expect(GenerationBudgetSchema.parse({ act: 3000 })).toMatchObject({ act: 3000, plan: 1024 });
    expect(() => GenerationBudgetSchema.parse({ act: 0 })).toThrow();
  });

  it("a reply cut by the length limit, on either API", () => {
    expect(
      cutAtBudget(new AIMessage({ content: "", response_metadata: { finish_reason: "length" } })),
    ).toBe(true);
    expect(
      cutAtBudget(new AIMessage({ content: "", response_metadata: { done_reason: "length" } })),
    ).toBe(true);
    expect(
      cutAtBudget(
        new AIMessage({ content: "", response_metadata: { finish_reason: "tool_calls" } }),
      ),
    ).toBe(false);
  });

  it("names the call that was cut: the server's raw call, one the wire kept as text, or text", () => {
    const openai = new AIMessage({
      content: "",
      additional_kwargs: {
        tool_calls: [
          { id: "c1", type: "function", function: { name: "write_file", arguments: "{" } },
        ],
      },
    });
    expect(describeCut(openai, 512)).toBe(
      "your reply was cut at the generation budget of 512 tokens while writing a call to write_file (1 characters of arguments arrived); nothing in it was run",
    );
    // Ollama's string arguments, kept by the wire (ChatOllama would drop the call): their length
    const ollama = new AIMessage({
      content: "",
      tool_calls: [{ id: "c2", name: "edit_file", args: keptRaw(`{"path": "${"x".repeat(30)}`) }],
    });
    expect(describeCut(ollama, 8192)).toMatch(/while writing a call to edit_file \(40 characters/);
    expect(describeCut(new AIMessage({ content: '<tool_call>\n{"name": "write' }), 64)).toMatch(
      /while writing a tool call as text/,
    );
    expect(describeCut(new AIMessage({ content: "The answer is" }), 64)).toMatch(/mid-answer/);
  });
});

describe("budgets that fit the window", () => {
  it("the call's budget, or what the window leaves after the prompt and a margin, whichever is less", () => {
    expect(fittedBudget(8192, 16384, 1500)).toBe(8192);
    // 4096 - 2500 - (16 + 250)
    expect(fittedBudget(8192, 4096, 2500)).toBe(1330);
    expect(fittedBudget(256, 4096, 2500)).toBe(256);
    // a prompt that leaves nothing still gets the least budget a request may have
    expect(fittedBudget(8192, 4096, 4000)).toBe(16);
  });
});
