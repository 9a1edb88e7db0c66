/** The loop detectors with literal call sequences. */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_LOOP_SETTINGS,
  detectLoop,
  loopHint,
  type Candidate,
  type TrailEntry,
} from "../../../src/guard/loop.js";
import { callParts, callSignature, resultHash } from "../../../src/guard/signature.js";
import type { ToolClass } from "../../../src/tools/types.js";

const CLASS: Record<string, ToolClass> = {
  list_dir: "explore",
  read_file: "explore",
  grep: "explore",
  write_file: "mutate",
  run_command: "command",
};

const cand = (name: string, args: Record<string, unknown>): Candidate => ({
  name,
  signature: callSignature(name, args),
  toolClass: CLASS[name] ?? "explore",
  ...callParts(name, args),
});
const done = (name: string, args: Record<string, unknown>, result = "same"): TrailEntry => ({
  ...cand(name, args),
  id: Math.random().toString(36),
  ok: true,
  result: resultHash(result),
});

/** Runs a sequence through the detectors; returns the index of the first call that hits, or -1. */
function firstHit(seq: Array<[string, Record<string, unknown>, string?]>): number {
  const trail: TrailEntry[] = [];
  for (let i = 0; i < seq.length; i++) {
    const [name, args, result] = seq[i]!;
    if (detectLoop(trail, cand(name, args))) return i;
    trail.push(done(name, args, result ?? `result ${i}`));
  }
  return -1;
}

describe("repeat", () => {
  it("ls ./src, ls ./src/cli, ls ./src/tui is not a loop", () => {
    expect(
      firstHit([
        ["list_dir", { path: "./src" }],
        ["list_dir", { path: "./src/cli" }],
        ["list_dir", { path: "./src/tui" }],
      ]),
    ).toBe(-1);
  });
  it("ls .\\src, ls ./src, ls src/ is a loop at the third call", () => {
    expect(
      firstHit([
        ["list_dir", { path: ".\\src" }],
        ["list_dir", { path: "./src" }],
        ["list_dir", { path: "src/" }],
      ]),
    ).toBe(2);
  });
  it("writing the same file with the same content twice is a loop at the second", () => {
    expect(
      firstHit([
        ["write_file", { path: "a", content: "x" }],
        ["write_file", { path: "a", content: "x" }],
      ]),
    ).toBe(1);
  });
  it("a command polled for a changing result is not a loop; the same output three times is", () => {
    const poll: Array<[string, Record<string, unknown>, string]> = [0, 1, 2, 3].map((i) => [
      "run_command",
      { command: "curl -s localhost:3000/health" },
      `status ${i}`,
    ]);
    expect(firstHit(poll)).toBe(-1);
    expect(
      firstHit([0, 1, 2].map(() => ["run_command", { command: "npm test" }, "1 failing"])),
    ).toBe(2);
  });
});

describe("cycle", () => {
  it("A-B-A-B-A-B is cut at the sixth call", () => {
    const a: [string, Record<string, unknown>] = ["read_file", { path: "a.ts" }];
    const b: [string, Record<string, unknown>] = ["read_file", { path: "b.ts" }];
    expect(firstHit([a, b, a, b, a, b, a])).toBe(5);
  });
  it("A-B-C three times is cut at the ninth call", () => {
    const seq: Array<[string, Record<string, unknown>]> = [];
    for (let i = 0; i < 4; i++)
      for (const p of ["a", "b", "c"]) seq.push(["read_file", { path: p }]);
    expect(firstHit(seq)).toBe(8);
  });
  it("A-B-A-C-A-D is not a cycle", () => {
    expect(
      firstHit(
        ["b", "c", "d"].flatMap((p) => [
          ["list_dir", { path: "a" }] as [string, Record<string, unknown>],
          ["list_dir", { path: p }] as [string, Record<string, unknown>],
        ]),
      ),
    ).toBe(-1);
  });
});

describe("window and no-progress", () => {
  it("the same call scattered among others is cut at its fourth occurrence in the window", () => {
    const x: [string, Record<string, unknown>, string] = ["grep", { pattern: "TODO" }, "same hits"];
    const seq: Array<[string, Record<string, unknown>, string?]> = [
      x,
      ["read_file", { path: "1" }],
      ["read_file", { path: "2" }],
      x,
      ["read_file", { path: "3" }],
      ["read_file", { path: "4" }],
      x,
    ];
    // third occurrence with the same result twice before → no-progress at index 6
    expect(firstHit(seq)).toBe(6);
  });
  it("the same result three times is no progress, even with other calls between", () => {
    const a: [string, Record<string, unknown>, string] = ["list_dir", { path: "src" }, "a.ts"];
    expect(firstHit([a, ["read_file", { path: "x" }], a, ["read_file", { path: "y" }], a])).toBe(4);
  });
  it("reads of different files are never cut", () => {
    expect(
      firstHit(
        Array.from(
          { length: 20 },
          (_, i) => ["read_file", { path: `src/f${i}.ts` }] as [string, Record<string, unknown>],
        ),
      ),
    ).toBe(-1);
  });
});

describe("wobble", () => {
  it("grep on one folder with patterns that only wobble is cut at the fifth", () => {
    const patterns = ["userId", "userID", "user_id", "UserId", "userid", "user-id"];
    expect(
      firstHit(patterns.map((p) => ["grep", { pattern: p, path: "src" }, `hits for ${p}`])),
    ).toBe(4);
  });
  it("paging through a file (only numbers change) is not wobble", () => {
    expect(
      firstHit(
        [1, 51, 101, 151, 201, 251, 301].map((o) => [
          "read_file",
          { path: "big.log", offset: o, limit: 50 },
          `lines ${o}`,
        ]),
      ),
    ).toBe(-1);
  });
});

describe("loopHint", () => {
  it("says what repeated, how often, what the model already has, and what to do instead", () => {
    const hit = detectLoop(
      [
        done("list_dir", { path: "src" }, "a.ts\nb.ts"),
        done("list_dir", { path: "src" }, "a.ts\nb.ts"),
      ],
      cand("list_dir", { path: "./src" }),
      DEFAULT_LOOP_SETTINGS,
    )!;
    const text = loopHint(hit, "a.ts\nb.ts");
    expect(text).toMatch(/same call 3 times in a row: list_dir\(\{"path":"src"\}\)/);
    expect(text).toContain("a.ts\nb.ts");
    expect(text).toMatch(/take a different next step/);
  });
});
