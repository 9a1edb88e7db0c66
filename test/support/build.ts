/**
 * vitest global setup: the end-to-end tests run the built `keel` command, so build it first —
 * a stale dist/ would test yesterday's code.
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

export default function setup(): void {
  const root = path.resolve(import.meta.dirname, "../..");
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit",
  });
}
