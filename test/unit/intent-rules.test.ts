import { describe, expect, it } from "vitest";
import { classifyByRules } from "../../src/agent/nodes/intent-classify/rules.js";

describe("classifyByRules", () => {
  it.each([
    ["Build a REST API endpoint with these specifications: GET /users", "build"],
    ["Create a CLI that converts CSV to JSON", "build"],
    ["  implement the login page", "build"],
    ["Write a script that renames photos", "build"],
    ["Fix the failing test in test/api.test.ts", "modify"],
    ["Refactor src/cli into smaller modules", "modify"],
    ["Run the tests", "run"],
    ["Deeply analyse a codebase into local folder .\\src", "analyze"],
    ["Analyze ./src", "analyze"],
    ["Explain how to build a REST API in Express", "analyze"],
    ["What does src/cli/main.ts do?", "analyze"],
    ["What is the capital of France?", "chat"],
    ["hello", "chat"],
  ])("%j → %s", (text, intent) => {
    const v = classifyByRules(text);
    expect(v.intent).toBe(intent);
    expect(v.confidence).toBeGreaterThanOrEqual(0.7);
  });

  it("is unsure about requests without a clear verb", () => {
    expect(classifyByRules("the thing with the users table").confidence).toBeLessThan(0.7);
  });
});
