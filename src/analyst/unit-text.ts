/**
 * Reads a unit's text from the analysed folder for the model or the queue, only when it is the
 * file the manifest names: a regular file reached through keel's file door (`files/door.ts`: no
 * link on the way or at the file, a FIFO or device refused at once, never waited on), at a path
 * inside the target, whose content still has the manifest's hash. Anything else is refused with
 * the reason, never read out (the manifest comes from a shared store: see manifest.ts).
 */
import { createHash } from "node:crypto";
import { FileRefused, readIn } from "../files/door.js";
import type { FileUnit } from "./enumerate.js";
import { isInsidePath } from "./manifest.js";

export type UnitText = { text: string } | { refused: string };

/** Reads units of one target. */
export function unitTextReader(
  target: string,
): (unit: Pick<FileUnit, "path" | "hash">) => Promise<UnitText> {
  return async (unit) => {
    if (!isInsidePath(unit.path))
      return { refused: `refused: ${unit.path} is not a path inside ${target}` };
    let buf: Buffer | undefined;
    try {
      buf = await readIn(target, unit.path, { maxBytes: Infinity });
    } catch (err) {
      if (!(err instanceof FileRefused)) {
        const code = (err as NodeJS.ErrnoException).code;
        return { refused: `cannot read ${unit.path}: ${code ?? (err as Error).message}` };
      }
      return {
        refused:
          err.reason === "link"
            ? `refused: ${unit.path} is a link or leads through one (keel reads no link in the analysed folder)`
            : `refused: ${err.message}`,
      };
    }
    if (!buf) return { refused: `cannot read ${unit.path}: it is gone since it was listed` };
    if (createHash("sha1").update(buf).digest("hex") !== unit.hash)
      return { refused: `${unit.path} changed since it was listed; run the analysis again` };
    return { text: buf.toString("utf8") };
  };
}
