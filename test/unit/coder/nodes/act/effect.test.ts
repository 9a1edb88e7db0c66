/** unmetEffect: a run whose request asked for a command to be run, and none ran. */
import { describe, expect, it } from "vitest";
import { tallyOfTrail } from "../../../../../src/coder/call-tally.js";
import { unmetEffect } from "../../../../../src/coder/nodes/act/effect.js";

describe("unmetEffect: a run that asked for a command", () => {
  const entry = (ok: boolean, kind?: "refused" | "failed" | "needs_approval") => ({
    id: "c",
    name: "run_command",
    signature: "s",
    toolClass: "command" as const,
    ok,
    ...(kind ? { kind } : {}),
  });
  const state = (trail: ReturnType<typeof entry>[], intent: "build" | "chat" = "build") => ({
    request: "Create hi.sh that prints hi, then run it",
    filesWritten: ["hi.sh"],
    callTally: tallyOfTrail(trail),
    intent: { intent, source: "rules" as const, confidence: 0.9 },
  });
  const alone = { workspace: "/nowhere", interactive: false };
  it("is not done while every command was refused, and is once one ran (a failing one too)", () => {
    expect(unmetEffect(state([entry(false, "refused")]), alone)).toEqual({
      detail:
        "the request asks for a command to be run, and none ran (the run_command call was refused)",
    });
    expect(unmetEffect(state([]), alone)).toEqual({
      detail: "the request asks for a command to be run, and none ran",
    });
    const failed = [entry(false, "refused"), entry(false, "failed")];
    expect(unmetEffect(state(failed), alone)).toBe(undefined);
    expect(unmetEffect(state([entry(true)]), alone)).toBe(undefined);
  });
  it("a command that needed approval: a person's no stands; with no one to ask the run ends not done", () => {
    const unapproved = state([entry(false, "needs_approval")]);
    expect(unmetEffect(unapproved, { ...alone, interactive: true })).toBe(undefined);
    expect(unmetEffect(unapproved, alone)).toEqual({
      detail: expect.stringMatching(/none ran: run_command needs a person's approval .*--yes/),
      final: true,
    });
  });
  it("asks nothing of a run that was offered no run_command (chat, analysis)", () => {
    expect(unmetEffect(state([], "chat"), alone)).toBe(undefined);
  });
});
