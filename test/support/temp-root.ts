/**
 * vitest global setup: every temporary folder the tests make (workspaces, homes, databases, the
 * sandbox's sockets) goes under one folder of this run, removed when the run ends — a full run
 * makes some two thousand, and a developer's /tmp should not keep them. Set first, so that the
 * other global setups and every test worker take it as their `os.tmpdir()`. keel's own state
 * folder (`KEEL_STATE_DIR`: checkpoints, undo records, stand-in records) is one under it too: tests
 * never write the person's home, and each workspace has its own folder there (keyed by its real
 * path), so test files running side by side do not meet.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export default function setup(): () => void {
  const before = process.env.TMPDIR;
  const stateBefore = process.env.KEEL_STATE_DIR;
  const root = mkdtempSync(path.join(tmpdir(), "keel-tests-"));
  chmodSync(root, 0o1777); // as /tmp is: the database server runs as its own user
  process.env.TMPDIR = root;
  process.env.KEEL_STATE_DIR = path.join(root, "keel-state");
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (stateBefore === undefined) delete process.env.KEEL_STATE_DIR;
    else process.env.KEEL_STATE_DIR = stateBefore;
    try {
      rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    } catch (e) {
      console.warn(`keel tests: could not remove ${root}: ${(e as Error).message}`);
    }
  };
}
