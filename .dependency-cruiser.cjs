// @ts-check
/**
 * keel's import rules, checked by `npm run lint` (depcruise): no import cycle, and every module
 * imports only its own group and the layers below it (docs/ARCHITECTURE.md, "Layers"). Type-only
 * imports count like any other: a type that two layers need lives in the lower one.
 */

/**
 * The layers, lowest first. Each group is a set of modules; a module may import its own group and
 * any group of a lower layer, never a group of its own layer or a higher one.
 * @type {Array<Array<{ name: string; path: string }>>}
 */
const LAYERS = [
  [{ name: "env", path: "^src/env\\.ts$" }],
  [
    {
      name: "base (guard/, printable.ts, tools/types.ts, sandbox/policy.ts, sandbox/protected.ts, sandbox/names.ts, sandbox/stand-ins.ts)",
      path: "^src/(guard/|printable\\.ts$|tools/types\\.ts$|sandbox/(policy|protected|names|stand-ins)\\.ts$)",
    },
  ],
  [
    { name: "models/", path: "^src/models/" },
    { name: "files/", path: "^src/files/" },
  ],
  [{ name: "sandbox/", path: "^src/sandbox/(?!(policy|protected|names|stand-ins)\\.ts$)" }],
  [{ name: "tools/", path: "^src/tools/(?!types\\.ts$)" }],
  [
    { name: "persistence/", path: "^src/persistence/" },
    { name: "undo/", path: "^src/undo/" },
    { name: "mcp/", path: "^src/mcp/" },
    { name: "testing/", path: "^src/testing/" },
  ],
  [{ name: "run/", path: "^src/run/" }],
  [
    { name: "coder/", path: "^src/coder/" },
    { name: "analyst/", path: "^src/analyst/" },
  ],
  [
    { name: "session/", path: "^src/session/" },
    { name: "stats/", path: "^src/stats/" },
    { name: "distributed/", path: "^src/distributed/" },
    { name: "demo/", path: "^src/demo/" },
  ],
  [{ name: "eval/", path: "^src/eval/" }],
  [{ name: "package API and server graphs", path: "^(src/(index|api)\\.ts$|graphs/)" }],
  [{ name: "cli/", path: "^src/cli/" }],
];

const either = (/** @type {string[]} */ paths) => paths.map((p) => `(${p})`).join("|");

/** One rule per group: nothing of its own layer's other groups, nothing of a higher layer. */
const layerRules = LAYERS.flatMap((layer, i) =>
  layer.map((group) => {
    const peers = layer.filter((g) => g !== group);
    const above = LAYERS.slice(i + 1).flat();
    const below = LAYERS.slice(0, i).flat();
    const banned = [...peers, ...above];
    return {
      name: `layer: ${group.name}`,
      comment:
        `${group.name} is in layer ${i} of docs/ARCHITECTURE.md ("Layers"): it imports only ` +
        `itself and ${below.length ? below.map((g) => g.name).join(", ") : "nothing of keel"}. ` +
        "Move what both sides need down, or pass a function in.",
      severity: /** @type {const} */ ("error"),
      from: { path: group.path },
      to: { path: either(banned.map((g) => g.path)) },
    };
  }),
).filter((rule) => rule.to.path !== "");

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment:
        "An import cycle (type-only imports included). Move the shared type or constant down to " +
        "the lower module, pass a function in, or split the file.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-src-to-tests-or-tools",
      comment: "Shipped code never imports test/, bench/ or scripts/.",
      severity: "error",
      from: { path: "^(src|graphs)/" },
      to: { path: "^(test|bench|scripts)/" },
    },
    {
      name: "turn-below-nodes",
      comment:
        "coder/turn/, coder/history/ and coder/learning/ serve the nodes; a node's own files " +
        "(coder/nodes/) are not imported by them.",
      severity: "error",
      from: { path: "^src/coder/(turn|history|learning)/" },
      to: { path: "^src/coder/nodes/" },
    },
    {
      name: "layer: unknown",
      comment:
        "This module is in no layer: add its folder to LAYERS in .dependency-cruiser.cjs and to " +
        'the "Layers" section of docs/ARCHITECTURE.md.',
      severity: "error",
      from: { path: "^(src|graphs)/", pathNot: either(LAYERS.flat().map((g) => g.path)) },
      to: {},
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".d.ts"],
    },
  },
};
