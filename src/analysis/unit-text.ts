/**
 * Reads a unit's text from the analysed folder for the model or the queue, only when it is the
 * file the manifest names: a regular file reached without a link, at a real path inside the real
 * target, whose content still has the manifest's hash. Anything else is refused with the reason,
 * never read out (the manifest comes from a shared store: see manifest.ts).
 */
import { constants } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { createHash } from "node:crypto";
import path from "node:path";
import type { FileUnit } from "./enumerate.js";
import { isInsidePath } from "./manifest.js";

export type UnitText = { text: string } | { refused: string };

/** Reads units of one target; the target's real path is resolved once. */
export function unitTextReader(
  target: string,
): (unit: Pick<FileUnit, "path" | "hash">) => Promise<UnitText> {
  let real: Promise<string> | undefined;
  return async (unit) => {
    if (!isInsidePath(unit.path))
      return { refused: `refused: ${unit.path} is not a path inside ${target}` };
    const root = await (real ??= realpath(target));
    const file = path.join(root, unit.path);
    let handle;
    try {
      handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return {
        refused:
          code === "ELOOP"
            ? `refused: ${unit.path} is a link (keel reads no link in the analysed folder)`
            : `cannot read ${unit.path}: ${code ?? (err as Error).message}`,
      };
    }
    try {
      if (!(await handle.stat()).isFile())
        return { refused: `refused: ${unit.path} is not a file` };
      // no folder on the way may be a link either: the real path is the path
      if ((await realpath(file)) !== file)
        return { refused: `refused: ${unit.path} leads through a link out of ${target}` };
      const buf = await handle.readFile();
      if (createHash("sha1").update(buf).digest("hex") !== unit.hash)
        return { refused: `${unit.path} changed since it was listed; run the analysis again` };
      return { text: buf.toString("utf8") };
    } finally {
      await handle.close();
    }
  };
}
