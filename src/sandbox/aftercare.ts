/**
 * After a sandboxed command: what it may not leave behind where the sandbox could not protect it
 * yet (see `PROTECTED_IN_WORKSPACE`), removed.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { withoutRiskyGitConfig } from "./policy.js";

/**
 * Removes what a command created where the sandbox could not protect it yet (`PROTECTED_IN_WORKSPACE`
 * that did not exist before it ran): git hooks other than git's own samples, risky keys of a new
 * git config, an `.mcp.json` (servers keel would start), a `.keel` folder. Returns what was removed,
 * workspace-relative.
 */
export function removeCreated(workspace: string, paths: string[]): string[] {
  const removed: string[] = [];
  const at = (p: string) => path.join(workspace, p);
  try {
    if (paths.includes(".git/hooks") && existsSync(at(".git/hooks"))) {
      for (const name of readdirSync(at(".git/hooks"))) {
        if (name.endsWith(".sample")) continue;
        rmSync(at(`.git/hooks/${name}`), { recursive: true, force: true });
        removed.push(`.git/hooks/${name}`);
      }
    }
    if (paths.includes(".git/config") && existsSync(at(".git/config"))) {
      const clean = withoutRiskyGitConfig(readFileSync(at(".git/config"), "utf8"));
      if (clean.removed.length > 0) {
        writeFileSync(at(".git/config"), clean.text);
        removed.push(...clean.removed.map((k) => `${k} from .git/config`));
      }
    }
    for (const p of [".mcp.json", ".keel"]) {
      if (paths.includes(p) && existsSync(at(p))) {
        rmSync(at(p), { recursive: true, force: true });
        removed.push(p);
      }
    }
  } catch (e) {
    removed.push(`(keel could not check ${paths.join(", ")}: ${(e as Error).message})`);
  }
  return removed;
}
