/**
 * The files yarn's own config names as code every `yarn` command runs (sandbox/yarn-named.ts):
 * `.yarnrc.yml`'s `yarnPath` and `plugins`, `.yarnrc`'s `yarn-path`. The gate asks a person for a
 * write there; aftercare removes one a command made.
 */
import { mkdirSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cleanAfter } from "../../../src/sandbox/aftercare.js";
import { markWorkspace, nestedDenies } from "../../../src/sandbox/look.js";
import { yarnNamedOn, yarnValues } from "../../../src/sandbox/yarn-named.js";
import { gateDecision } from "../../support/gate.js";
import { tempWorkspace } from "../../support/harness.js";

describe("yarnValues", () => {
  it("reads yarnPath and plugins (a path or an entry's path) as YAML, yarn-path as yarn 1 does", () => {
    const yml = [
      "nodeLinker: node-modules",
      "yarnPath: .yarn/releases/yarn-4.1.0.cjs",
      "plugins:",
      "  - path: .yarn/plugins/@yarnpkg/plugin-x.cjs",
      '    spec: "@yarnpkg/plugin-x"',
      "  - tools/plugin-y.js",
    ].join("\n");
    expect(yarnValues(".yarnrc.yml", yml).map((v) => `${v.key} ${v.value}`)).toEqual([
      "yarnPath .yarn/releases/yarn-4.1.0.cjs",
      "plugins .yarn/plugins/@yarnpkg/plugin-x.cjs",
      "plugins tools/plugin-y.js",
    ]);
    for (const rc of [
      'yarn-path "./.yarn/releases/yarn-1.22.19.cjs"\n',
      "yarn-path ./.yarn/releases/yarn-1.22.19.cjs\n",
      "  \"yarn-path\" './.yarn/releases/yarn-1.22.19.cjs'",
    ])
      expect(
        yarnValues(".yarnrc", rc).map((v) => v.value),
        rc,
      ).toEqual(["./.yarn/releases/yarn-1.22.19.cjs"]);
    expect(yarnValues(".yarnrc.yml", "yarnPath: [unclosed")).toEqual([]);
    expect(yarnValues(".yarnrc.yml", "enableTelemetry: false\n")).toEqual([]);
    expect(yarnValues(".yarnrc", "registry https://example.org\n")).toEqual([]);
  });
});

describe("what a yarn config names", () => {
  const project = () => {
    const w = path.join(tempWorkspace("keel-yarn-"), "ws");
    mkdirSync(path.join(w, "legacy"), { recursive: true });
    writeFileSync(
      path.join(w, ".yarnrc.yml"),
      "yarnPath: .yarn/releases/yarn-4.1.0.cjs\nplugins:\n  - path: .yarn/plugins/p.cjs\n",
    );
    writeFileSync(path.join(w, "legacy/.yarnrc"), 'yarn-path "../tools/yarn-1.js"\n');
    return w;
  };
  it("the gate asks a person for a write there, from the config's folder; not elsewhere", () => {
    const w = project();
    for (const rel of [".yarn/releases/yarn-4.1.0.cjs", ".yarn/plugins/p.cjs"])
      expect(gateDecision(w, rel), rel).toMatch(/is protected: yarn (runs|loads)/);
    // yarn-path of legacy/.yarnrc, read when yarn runs in legacy/: named to a write on its way
    expect(yarnNamedOn(w, "legacy/x.js").map((n) => n.path)).toEqual([
      ".yarn/releases/yarn-4.1.0.cjs",
      ".yarn/plugins/p.cjs",
      "tools/yarn-1.js",
    ]);
    for (const rel of [".yarn/releases/other.cjs", "src/a.ts", "tools/yarn-1.md"])
      expect(gateDecision(w, rel), rel).toBe("run");
  });
  it("aftercare removes one a command made; one there is held read-only", () => {
    const w = project();
    mkdirSync(path.join(w, ".yarn/plugins"), { recursive: true });
    writeFileSync(path.join(w, ".yarn/plugins/p.cjs"), "module.exports = {}\n");
    const before = markWorkspace(w);
    expect(nestedDenies(before, w)).toContain(".yarn/plugins/p.cjs");
    mkdirSync(path.join(w, ".yarn/releases"), { recursive: true });
    mkdirSync(path.join(w, "tools"));
    writeFileSync(path.join(w, ".yarn/releases/yarn-4.1.0.cjs"), "require('child_process')\n");
    writeFileSync(path.join(w, "tools/yarn-1.js"), "require('child_process')\n");
    writeFileSync(path.join(w, ".yarn/releases/notes.md"), "the project's\n");
    expect(cleanAfter(w, before).sort()).toEqual([
      ".yarn/releases/yarn-4.1.0.cjs",
      "tools/yarn-1.js",
    ]);
    expect(existsSync(path.join(w, ".yarn/releases/yarn-4.1.0.cjs"))).toBe(false);
    expect(existsSync(path.join(w, ".yarn/releases/notes.md"))).toBe(true);
  });
});
