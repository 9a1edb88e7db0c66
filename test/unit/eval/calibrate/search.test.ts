/** Calibration's search: the candidates per dimension, racing them, and the winner. */
import { describe, expect, it } from "vitest";
import {
  beats,
  budgetCandidates,
  channelCandidates,
  clearlyBehind,
  contextCandidates,
  pickWinner,
  thinkingCandidates,
  trialOf,
} from "../../../../src/eval/calibrate/search.js";
import type { Attempt } from "../../../../src/eval/run.js";
import type { Trial } from "../../../../src/run/profiles.js";

const trial = (over: Partial<Trial>): Trial => ({
  dimension: "channel",
  label: "x",
  settings: {},
  passK: 0,
  tasks: 3,
  passes: 0,
  attempts: 3,
  wellFormed: 1,
  seconds: 10,
  ...over,
});

describe("candidates", () => {
  it("channel: native where the model takes tools, then prompt mode in its family's syntax and another", () => {
    expect(
      channelCandidates({ capabilities: ["completion", "tools"], format: "hermes" }).map(
        (c) => c.label,
      ),
    ).toEqual(["native", "prompt (hermes)", "prompt (llama3-json)"]);
    expect(
      channelCandidates({ capabilities: ["completion"], format: "mistral" }).map((c) => [
        c.label,
        c.settings,
      ]),
    ).toEqual([
      ["prompt (mistral)", { toolMode: "prompt", toolFormat: "mistral" }],
      ["prompt (hermes)", { toolMode: "prompt", toolFormat: "hermes" }],
    ]);
  });

  it("thinking: only for a thinking model on a server that takes think; levels only for harmony, in full", () => {
    const thinker = {
      capabilities: ["completion", "tools", "thinking"],
      format: "hermes" as const,
    };
    expect(thinkingCandidates({ ...thinker, capabilities: ["tools"] }, true, "quick")).toEqual([]);
    expect(thinkingCandidates(thinker, false, "quick")).toEqual([]);
    expect(thinkingCandidates(thinker, true, "quick").map((c) => c.settings)).toEqual([
      { think: "on" },
      { think: "off" },
      { think: "on", thinkCut: 512 },
    ]);
    expect(
      thinkingCandidates({ ...thinker, format: "harmony" }, true, "full").map((c) => c.label),
    ).toContain("thinking high");
  });

  it("window and budget: keel's first, then what the canary or the search offers", () => {
    expect(contextCandidates(16384, 4096).map((c) => c.settings)).toEqual([
      { contextWindow: 16384 },
      { contextWindow: 4096 },
    ]);
    expect(contextCandidates(16384, undefined)).toHaveLength(1);
    expect(contextCandidates(4096, 8192)).toHaveLength(1);
    expect(budgetCandidates(8192, "quick").map((c) => c.settings)).toEqual([
      {},
      { generationBudget: { act: 2048 } },
    ]);
    expect(budgetCandidates(2048, "quick")).toHaveLength(1);
  });
});

describe("racing and winning", () => {
  it("a candidate is clearly behind once even passing all it has left it would pass fewer than the leader", () => {
    const leader = trial({ passes: 3 });
    expect(clearlyBehind(0, 2, leader)).toBe(true);
    expect(clearlyBehind(1, 2, leader)).toBe(false);
    expect(clearlyBehind(0, 3, undefined)).toBe(false);
  });

  it("pass^k, then passes, then well-formed calls; on a tie only a clearly faster one wins; a stopped one never", () => {
    const a = trial({ passK: 2, passes: 2 });
    expect(beats(trial({ passK: 3, passes: 3, seconds: 99 }), a)).toBe(true);
    expect(beats(trial({ passK: 2, passes: 2, wellFormed: 0.5 }), a)).toBe(false);
    expect(beats(trial({ passK: 2, passes: 2, seconds: 7 }), a)).toBe(true);
    expect(beats(trial({ passK: 2, passes: 2, seconds: 8 }), a)).toBe(false);
    expect(
      beats(
        trial({ passK: 2, passes: 2, seconds: 0.2 }),
        trial({ passK: 2, passes: 2, seconds: 0.4 }),
      ),
    ).toBe(false);
    expect(beats(trial({ passK: 3, passes: 3, stopped: "clearly behind" }), a)).toBe(false);
    const first = trial({ label: "native", passK: 1, passes: 1 });
    const tie = trial({ label: "prompt", passK: 1, passes: 1 });
    expect(pickWinner([first, tie]).winner).toBe(first);
    expect(pickWinner([first, tie]).why).toMatch(/keel's default held/);
    const better = trial({ label: "prompt", passK: 3, passes: 3 });
    expect(pickWinner([first, better]).winner).toBe(better);
    expect(pickWinner([first, better]).why).toMatch(
      /pass\^k 3\/3.*against keel's default: pass\^k 1\/3/,
    );
  });

  it("a trial's numbers from its attempts", () => {
    const at = (task: string, pass: boolean, calls: number, wellFormed: number): Attempt =>
      ({ task, pass, calls, wellFormed, seconds: 2 }) as Attempt;
    const t = trialOf(
      { dimension: "budget", label: "b", settings: {} },
      [at("a", true, 2, 2), at("a", true, 1, 0), at("b", false, 1, 1)],
      ["a", "b", "c"],
      2,
      "clearly behind",
    );
    expect(t).toMatchObject({
      passK: 1,
      tasks: 3,
      passes: 2,
      attempts: 3,
      seconds: 2,
      stopped: "clearly behind",
    });
    expect(t.wellFormed).toBe(0.75);
  });
});
