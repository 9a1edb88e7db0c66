/** Calibration's canary: its prompt, and what the server's answer says. */
import { describe, expect, it } from "vitest";
import { canaryPrompt, readAnswer } from "../../../src/models/canary.js";
import { estimateTokens } from "../../../src/guard/token-estimate.js";

describe("the canary", () => {
  it("a prompt of about the tokens asked for, opening with the marker, that asks it back", () => {
    const p = canaryPrompt("KEEL-CANARY-TEST", 3000);
    expect(p.startsWith("The code is KEEL-CANARY-TEST.")).toBe(true);
    expect(p).toMatch(/Reply with the code only\.$/);
    expect(Math.abs(estimateTokens(p) - 3000)).toBeLessThan(60);
    expect(new Set(p.split("\n")).size).toBe(p.split("\n").length);
  });

  it("reads what the server says: counts, cache, refusals with their sizes, errors", () => {
    expect(
      readAnswer(
        200,
        JSON.stringify({
          choices: [{ message: { content: "x" }, finish_reason: "length" }],
          usage: {
            prompt_tokens: 90,
            completion_tokens: 1,
            prompt_tokens_details: { cached_tokens: 80 },
          },
        }),
        false,
      ),
    ).toMatchObject({ counted: 90, cached: 80, generated: 1, finish: "length", reply: "x" });
    expect(
      readAnswer(
        400,
        '{"error":{"code":400,"message":"request (3053 tokens) exceeds the available context size (512 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":3053,"n_ctx":512}}',
        false,
      ).overContext,
    ).toEqual({ prompt: 3053, window: 512 });
    expect(
      readAnswer(400, '{"error":"the input length exceeds the context length"}', true).overContext,
    ).toEqual({});
    expect(
      readAnswer(
        500,
        '{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}',
        false,
      ),
    ).toMatchObject({ status: 500, error: "tools param requires --jinja flag" });
    expect(
      readAnswer(
        200,
        '{"message":{"content":"hi"},"prompt_eval_count":12,"eval_count":1,"load_duration":5}',
        true,
      ),
    ).toMatchObject({ counted: 12, generated: 1, loadNs: 5, reply: "hi" });
  });
});
