/**
 * The benches' temporary folders (workspaces, databases, homes), all under one folder per run that
 * goes when the process ends: a full `npm run bench` makes some two hundred.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

let root: string | undefined;

/** A fresh folder named `<prefix>XXXXXX` under this run's folder. */
export function benchTemp(prefix: string): string {
  if (root === undefined) {
    const made = (root = mkdtempSync(path.join(tmpdir(), "keel-bench-run-")));
    process.on("exit", () => rmSync(made, { recursive: true, force: true }));
    process.once("SIGINT", () => process.exit(130));
  }
  return mkdtempSync(path.join(root, prefix));
}
