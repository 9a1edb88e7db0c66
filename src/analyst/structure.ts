/**
 * Structural facts without a model: per-file imports and symbols (tree-sitter), imports resolved
 * to files of the codebase, the import graph between folders, and hotspots.
 */
import path from "node:path";
import { describeSource, type FileStructure } from "../tools/code-structure.js";
import type { FileUnit } from "./enumerate.js";

export interface UnitFacts {
  imports: string[];
  /** Imports that resolve to files of the analysed codebase. */
  internal: string[];
  symbols: Array<{ kind: string; name: string; line: number; exported: boolean }>;
  todos: number;
  parseErrors: boolean;
}

/** The facts of a unit that could not be read. */
export const NO_FACTS: UnitFacts = Object.freeze({
  imports: [],
  internal: [],
  symbols: [],
  todos: 0,
  parseErrors: false,
});

const JS_EXT = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];

/** The codebase file an import names, if it names one. */
export function resolveImport(
  from: string,
  spec: string,
  files: ReadonlySet<string>,
): string | undefined {
  const dir = path.posix.dirname(from);
  const tryPaths = (base: string, exts: string[]) => {
    for (const candidate of [
      base,
      ...exts.map((e) => base + e),
      ...exts.map((e) => `${base}/index${e}`),
      `${base}/__init__.py`,
    ]) {
      const n = path.posix.normalize(candidate);
      if (files.has(n)) return n;
    }
    return undefined;
  };
  if (spec.startsWith("./") || spec.startsWith("../")) {
    const base = path.posix.join(dir, spec);
    // NodeNext writes ".js" for a ".ts" source.
    return tryPaths(base, JS_EXT) ?? tryPaths(base.replace(/\.(m|c)?js$/, ""), JS_EXT);
  }
  const py = /^(\.*)([\w.]*)$/.exec(spec.replace(/^from\s+/, "").split(/\s+/)[0] ?? "");
  if (py && from.endsWith(".py")) {
    const dots = py[1]!.length;
    const mod = py[2]!.replace(/\./g, "/");
    if (dots > 0) {
      let base = dir;
      for (let i = 1; i < dots; i++) base = path.posix.dirname(base);
      return tryPaths(mod ? `${base}/${mod}` : base, [".py"]);
    }
    if (mod) return tryPaths(mod, [".py"]) ?? tryPaths(`src/${mod}`, [".py"]);
  }
  return undefined;
}

/** Facts of one file, from its text. */
export async function factsOf(
  unit: FileUnit,
  text: string,
  files: ReadonlySet<string>,
): Promise<UnitFacts> {
  const s: FileStructure = await describeSource(unit.path, text);
  const internal = [
    ...new Set(
      s.imports
        .map((i) => resolveImport(unit.path, i, files))
        .filter((x): x is string => Boolean(x)),
    ),
  ];
  return {
    imports: s.imports.slice(0, 60),
    internal,
    symbols: s.symbols.slice(0, 60),
    todos: (text.match(/\b(TODO|FIXME|HACK|XXX)\b/g) ?? []).length,
    parseErrors: s.parseErrors,
  };
}

export interface Hotspots {
  largest: Array<{ path: string; lines: number }>;
  mostImported: Array<{ path: string; importedBy: number }>;
  mostSymbols: Array<{ path: string; symbols: number }>;
  mostTodos: Array<{ path: string; todos: number }>;
}

/** Top files by size, fan-in, symbol count and TODOs. */
export function hotspots(units: FileUnit[], facts: Map<string, UnitFacts>, top = 8): Hotspots {
  const fanIn = new Map<string, number>();
  for (const f of facts.values()) for (const t of f.internal) fanIn.set(t, (fanIn.get(t) ?? 0) + 1);
  const by = <T>(items: T[], key: (t: T) => number) =>
    items
      .filter((t) => key(t) > 0)
      .sort((a, b) => key(b) - key(a))
      .slice(0, top);
  return {
    largest: by(
      units.map((u) => ({ path: u.path, lines: u.lines })),
      (x) => x.lines,
    ),
    mostImported: by(
      [...fanIn].map(([p, n]) => ({ path: p, importedBy: n })),
      (x) => x.importedBy,
    ),
    mostSymbols: by(
      units.map((u) => ({ path: u.path, symbols: facts.get(u.path)?.symbols.length ?? 0 })),
      (x) => x.symbols,
    ),
    mostTodos: by(
      units.map((u) => ({ path: u.path, todos: facts.get(u.path)?.todos ?? 0 })),
      (x) => x.todos,
    ),
  };
}

/** Import edges between folders ("src/cli" → "src/coder"), with how many imports each carries. */
export function folderGraph(
  facts: Map<string, UnitFacts>,
): Array<{ from: string; to: string; imports: number }> {
  const edges = new Map<string, number>();
  for (const [file, f] of facts) {
    for (const t of f.internal) {
      const a = path.posix.dirname(file);
      const b = path.posix.dirname(t);
      if (a !== b) edges.set(`${a}\n${b}`, (edges.get(`${a}\n${b}`) ?? 0) + 1);
    }
  }
  return [...edges]
    .map(([k, n]) => {
      const [from, to] = k.split("\n") as [string, string];
      return { from, to, imports: n };
    })
    .sort(
      (a, b) => b.imports - a.imports || a.from.localeCompare(b.from) || a.to.localeCompare(b.to),
    );
}
