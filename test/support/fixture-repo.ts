/**
 * A generated codebase for analyst tests: a deterministic mix of TypeScript and Python modules
 * that import each other, docs, a .gitignore, vendored and generated files, a binary and one file
 * large enough to be analysed in parts.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface FixtureInfo {
  /** Files the analyst should analyse (relative paths). */
  units: string[];
  /** The file that needs several parts. */
  large: string;
}

export function generateRepo(root: string, count = 320): FixtureInfo {
  const units: string[] = [];
  const write = (rel: string, text: string | Buffer, unit = true) => {
    const p = path.join(root, rel);
    mkdirSync(path.dirname(p), { recursive: true });
    writeFileSync(p, text);
    if (unit) units.push(rel);
  };
  const areas = ["api", "core", "db", "ui", "jobs", "auth", "billing", "search"];
  let i = 0;
  while (units.length < count - 12) {
    const area = areas[i % areas.length]!;
    const sub = `sub${Math.floor(i / 40)}`;
    if (i % 5 === 4) {
      write(
        `py/${area}/${sub}/mod_${i}.py`,
        `"""Module ${i}."""\nimport os\nfrom . import helpers_${i % 3}\n\n\nclass Worker${i}:\n    def run(self):\n        return ${i}  # TODO: tune\n\n\ndef main_${i}():\n    return Worker${i}().run()\n`,
      );
    } else {
      const dep =
        i > 0
          ? `import { value${i - 1} } from "../../${areas[(i - 1) % areas.length]}/sub${Math.floor((i - 1) / 40)}/m${i - 1}.js";\n`
          : "";
      write(
        `src/${area}/${sub}/m${i}.ts`,
        `${dep}/** Module ${i} of ${area}. */\nexport const value${i} = ${i};\nexport function compute${i}(x: number): number {\n  return x * ${i}${i > 0 ? ` + value${i - 1}` : ""};\n}\n${i % 7 === 0 ? "// FIXME: handle overflow\n" : ""}`,
      );
    }
    i++;
  }
  for (let h = 0; h < 3; h++) write(`py/helpers_${h}.py`, `def helper_${h}():\n    return ${h}\n`);
  write("README.md", "# Fixture\n\nA generated codebase for keel's analyst tests.\n");
  write("docs/architecture.md", "# Architecture\n\nLayers: api → core → db.\n");
  write("package.json", JSON.stringify({ name: "fixture", version: "1.0.0" }, null, 2));
  const large = "src/core/large.ts";
  write(
    large,
    Array.from(
      { length: 1500 },
      (_, n) =>
        `export function f${n}(a: number, b: number): number { return a * ${n} + b; } // line ${n}`,
    ).join("\n"),
  );
  for (let n = 0; units.length < count; n++)
    write(`scripts/task${n}.sh`, `#!/bin/sh\necho task ${n}\n`);
  // Not units: ignored, vendored, generated, binary.
  write(".gitignore", "build/\n*.log\nsecret.env\n", false);
  write("build/out.js", "console.log('built')\n", false);
  write("debug.log", "noise\n", false);
  write("secret.env", "KEY=1\n", false);
  write("node_modules/dep/index.js", "module.exports = 1;\n", false);
  write("vendor/lib/x.go", "package x\n", false);
  write("package-lock.json", "{}\n", false);
  write("assets/logo.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]), false);
  write("src/app.min.js", "var a=1;\n", false);
  units.sort();
  return { units, large };
}
