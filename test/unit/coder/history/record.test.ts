/** compactTargets: the record names what was read in fewer tokens. */
import { describe, expect, it } from "vitest";
import { compactTargets } from "../../../../src/coder/history/record.js";

describe("compactTargets: the record names what was read in fewer tokens", () => {
  it("writes a numbered run as one range and a folder's files as one group, in the order first seen", () => {
    expect(compactTargets(Array.from({ length: 68 }, (_, i) => `notes/n${i}.txt`))).toEqual([
      "notes/n{0..67}.txt",
    ]);
    expect(
      compactTargets([
        "src/a.ts",
        "README.md",
        "src/b.ts",
        "npm test",
        "src/c/d.ts",
        "f0",
        "f1",
        "f2",
        "f4",
        "logs/007.log",
        "logs/008.log",
        "logs/009.log",
        "TODO|FIXME",
      ]),
    ).toEqual([
      "src/{a.ts,b.ts}",
      "README.md",
      "npm test",
      "src/c/d.ts",
      "f{0..2}",
      "f4",
      // a zero-padded run keeps its zeros in front of the range
      "logs/00{7..9}.log",
      "TODO|FIXME",
    ]);
  });

  it("takes numbers of up to 15 digits (beyond, a number and the next are one float); never hangs", () => {
    const big = [
      "ids/10000000000000000.json",
      "ids/10000000000000001.json",
      "ids/9007199254740992",
    ];
    expect(compactTargets(big)).toEqual([
      "ids/{10000000000000000.json,10000000000000001.json,9007199254740992}",
    ]);
    expect(compactTargets(["r999999999999998", "r999999999999999", "r1000000000000000"])).toEqual([
      "r999999999999998",
      "r999999999999999",
      "r1000000000000000",
    ]);
    expect(compactTargets(["r99999999999998", "r99999999999999", "r100000000000000"])).toEqual([
      "r{99999999999998..100000000000000}",
    ]);
  });

  it("keeps runs shorter than three, and names that only look alike, as they are", () => {
    expect(compactTargets(["a1.ts", "a2.ts", "b3.ts", "a 4", "a 5", "a 6"])).toEqual([
      "a1.ts",
      "a2.ts",
      "b3.ts",
      "a {4..6}",
    ]);
  });
});
