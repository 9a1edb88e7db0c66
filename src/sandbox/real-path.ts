/** Real paths for what keel checks and what it protects (tools/workspace-path.ts, sandbox/git-named.ts). */
import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";

/**
 * The real path a tool would act on: the path's own real path when it exists; else the real path of
 * its deepest existing ancestor with the missing rest appended. Undefined when a link on the way
 * leads nowhere (a dangling link: writing through it would create its target, wherever that is).
 */
export function realTarget(abs: string): string | undefined {
  const rest: string[] = [];
  for (let probe = abs; ; probe = path.dirname(probe)) {
    try {
      return path.join(realpathSync(probe), ...rest.reverse());
    } catch {
      // missing, or a link that leads nowhere
    }
    if (isLink(probe)) return undefined;
    const parent = path.dirname(probe);
    if (parent === probe) return undefined;
    rest.push(path.basename(probe));
  }
}

/** Whether a path is a link; not when it cannot be looked at (a file on the way: ENOTDIR). */
function isLink(p: string): boolean {
  try {
    return lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  } catch {
    return false;
  }
}
