// At the top of test/unit/: the import rules are over all of src/.
/**
 * The import rules bite: `npm run lint:deps` runs depcruise with .dependency-cruiser.cjs, and here
 * the same command runs on a small tree laid out like keel's. A downward import passes; an upward
 * one, a cycle (type-only too), shipped code importing test/, a turn helper importing a node, and a
 * module in no layer each fail with the rule that names them.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempWorkspace } from "../support/harness.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const CONFIG = path.join(REPO, ".dependency-cruiser.cjs");
const DEPCRUISE = path.join(REPO, "node_modules/.bin/depcruise");

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: Array<{ name: string }>;
}

/**
 * Runs depcruise on a tree of the given files: as `npm run lint:deps` does (its exit status), and
 * for its violations as JSON (that reporter always exits 0).
 */
function cruise(files: Record<string, string>): { status: number | null; violations: Violation[] } {
  const root = tempWorkspace("keel-import-rules-");
  const all: Record<string, string> = {
    "tsconfig.json": JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true },
      include: ["src", "graphs", "test"],
    }),
    "package.json": JSON.stringify({ type: "module" }),
    ...files,
  };
  for (const [rel, text] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  const run = (output: string) =>
    spawnSync(process.execPath, [DEPCRUISE, "src", "--config", CONFIG, "--output-type", output], {
      cwd: root,
      encoding: "utf8",
    });
  const out = JSON.parse(run("json").stdout) as { summary: { violations: Violation[] } };
  return { status: run("err-long").status, violations: out.summary.violations };
}

const edges = (vs: Violation[]) => vs.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);

describe("the import rules", () => {
  it("pass imports down the layers, and fail one up, naming the layer", () => {
    const { status, violations } = cruise({
      "src/env.ts": "export const env = 1;\n",
      "src/guard/loop.ts": 'import { env } from "../env.js";\nexport const loop = env;\n',
      "src/models/retry.ts": 'import { loop } from "../guard/loop.js";\nexport const r = loop;\n',
      "src/coder/graph.ts": 'import { r } from "../models/retry.js";\nexport const g = r;\n',
      "src/cli/main.ts": 'import { g } from "../coder/graph.js";\nexport const main = g;\n',
      "src/tools/types.ts": 'import { main } from "../cli/main.js";\nexport const t = main;\n',
    });
    expect(status).not.toBe(0);
    expect(edges(violations)).toEqual([
      "layer: base (guard/, printable.ts, tools/types.ts, sandbox/policy.ts, sandbox/protected.ts, sandbox/names.ts, sandbox/stand-ins.ts): src/tools/types.ts → src/cli/main.ts",
    ]);
  });

  it("pass a tree whose imports all go down", () => {
    const { status, violations } = cruise({
      "src/env.ts": "export const env = 1;\n",
      "src/run/settings.ts": 'import { env } from "../env.js";\nexport const s = env;\n',
      "src/session/session.ts": 'import { s } from "../run/settings.js";\nexport const x = s;\n',
      "src/eval/run.ts": 'import { x } from "../session/session.js";\nexport const e = x;\n',
      "src/cli/eval.ts": 'import { e } from "../eval/run.js";\nexport const c = e;\n',
    });
    expect(violations).toEqual([]);
    expect(status).toBe(0);
  });

  it("fail a cycle of type-only imports", () => {
    const { status, violations } = cruise({
      "src/models/errors.ts":
        'import type { Policy } from "./retry.js";\nexport type Kind = Policy | "x";\n',
      "src/models/retry.ts":
        'import type { Kind } from "./errors.js";\nexport type Policy = { kind?: Kind };\n',
    });
    expect(status).not.toBe(0);
    expect(violations.map((v) => v.rule.name)).toEqual(["no-circular"]);
    expect(violations[0]!.cycle?.map((c) => c.name).sort()).toEqual([
      "src/models/errors.ts",
      "src/models/retry.ts",
    ]);
  });

  it("fail eval importing cli, a peer layer's import, src importing test/, turn importing a node", () => {
    const { status, violations } = cruise({
      "src/cli/session.ts": "export const s = 1;\n",
      "src/eval/run.ts": 'import { s } from "../cli/session.js";\nexport const e = s;\n',
      "src/analyst/graph.ts": "export const a = 1;\n",
      "src/coder/graph.ts": 'import { a } from "../analyst/graph.js";\nexport const g = a;\n',
      "test/support/harness.ts": "export const h = 1;\n",
      "src/undo/record.ts":
        'import { h } from "../../test/support/harness.js";\nexport const u = h;\n',
      "src/coder/nodes/act/prompt.ts": "export const p = 1;\n",
      "src/coder/turn/setup.ts":
        'import { p } from "../nodes/act/prompt.js";\nexport const t = p;\n',
    });
    expect(status).not.toBe(0);
    expect(edges(violations).sort()).toEqual(
      [
        "layer: coder/: src/coder/graph.ts → src/analyst/graph.ts",
        "layer: eval/: src/eval/run.ts → src/cli/session.ts",
        "no-src-to-tests-or-tools: src/undo/record.ts → test/support/harness.ts",
        "turn-below-nodes: src/coder/turn/setup.ts → src/coder/nodes/act/prompt.ts",
      ].sort(),
    );
  });

  it("fail a module in no layer", () => {
    const { status, violations } = cruise({
      "src/env.ts": "export const env = 1;\n",
      "src/newfolder/thing.ts": 'import { env } from "../env.js";\nexport const t = env;\n',
    });
    expect(status).not.toBe(0);
    expect(edges(violations)).toEqual(["layer: unknown: src/newfolder/thing.ts → src/env.ts"]);
  });
});
