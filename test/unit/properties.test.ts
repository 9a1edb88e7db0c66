/**
 * Property-based tests (fast-check) for the text tool-call parser and the argument repairs: they
 * never throw, never invent a call, and never lose a well-formed one.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairArguments } from "../../src/tools/repair.js";
import { ALL_TOOLS, lookupTool, validateArgs } from "../../src/tools/registry.js";

const value = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null));

const args = fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), value, { maxKeys: 4 });

describe("repair properties", () => {
  const schemas = ALL_TOOLS.map((t) => t);
  it("never throws on any arguments, and never invents content", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...schemas),
        fc.oneof(fc.anything(), args, fc.string()),
        (tool, input) => {
          const schema = {
            properties: {
              path: { type: "string" },
              content: { type: "string" },
              limit: { type: "integer" },
            },
          };
          const repaired = repairArguments(input, schema);
          const hadContent =
            input !== null &&
            typeof input === "object" &&
            Object.keys(input).some((k) =>
              [
                "content",
                "text",
                "contents",
                "data",
                "body",
                "file_text",
                "code",
                "file_content",
              ].includes(k),
            );
          const out = repaired.args as Record<string, unknown> | null;
          if (!hadContent && typeof input !== "string" && out && typeof out === "object")
            expect("content" in out).toBe(false);
          const v = validateArgs(tool, input);
          expect(typeof v.ok).toBe("boolean");
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a tool name lookup never throws and only ever returns an offered tool", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), fc.anything(), (n, a) => {
        const r = lookupTool(n, a, ALL_TOOLS);
        if (r.found) expect(ALL_TOOLS).toContain(r.tool);
        else expect(r.message).toContain("Available tools");
      }),
      { numRuns: 500 },
    );
  });
});
