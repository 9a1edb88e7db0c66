/**
 * What the last complete run of a codebase's analysis was made of, so that a re-run with nothing
 * changed reads and writes nothing but the listing: the fingerprint of its report's inputs (the
 * root's hash over every file, the model, the depth, where the report goes, the records' epoch)
 * and the hashes of the files it wrote. The epoch is a token every step that writes a record
 * replaces: records written since the last report (another thread of the same codebase, a run
 * stopped midway) make the fingerprint differ. Pure but for reading the report files back
 * (through keel's file door).
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { readIn } from "../files/door.js";
import type { Manifest } from "./manifest.js";

/** The version of the report's shape: a keel that writes another shape writes its report again. */
const REPORT_FORMAT = 2;

export interface LastRun {
  fingerprint: string;
  /** Units of that run without a usable finding: a re-run asks for them again, so it is no shortcut. */
  failed: number;
  /** sha1 of the Markdown and JSON reports written. */
  md: string;
  json: string;
}

const sha1 = (s: string | Buffer) => createHash("sha1").update(s).digest("hex");

/** Where the reports go: `--out`, else `<target>/.keel/report.md`; the JSON beside it. */
export function reportPaths(target: string, out?: string): { md: string; json: string } {
  const md = path.resolve(out ?? path.join(target, ".keel", "report.md"));
  return { md, json: md.replace(/\.md$/i, "") + ".json" };
}

/**
 * Where a report file is opened through keel's file door (`files/door.ts`): in the analysed folder
 * (the default `.keel/report.md`) from the folder, no link followed on the way or at the file;
 * elsewhere (an `--out` the person gave) from its own folder, which is the person's.
 */
export function reportDoor(target: string, file: string): { root: string; rel: string } {
  const rel = path.relative(target, file);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel)
    ? { root: target, rel }
    : { root: path.dirname(file), rel: path.basename(file) };
}

/** Everything a report is made of, as one hash: the same fingerprint, the same report. */
export function fingerprint(m: Manifest, depth: string, md: string, epoch: string): string {
  return sha1(
    JSON.stringify([
      REPORT_FORMAT,
      m.target,
      m.merkles["."] ?? "",
      m.files.length,
      m.folders.length,
      m.skipped,
      m.model,
      m.noModelReason ?? null,
      m.refused ?? [],
      depth,
      md,
      epoch,
    ]),
  );
}

/** Whether the last run saw exactly this and left no unit to ask again: its steps need not run. */
export const nothingChanged = (last: LastRun | undefined, print: string): last is LastRun =>
  Boolean(last && last.fingerprint === print && last.failed === 0);

/** Whether the report files on disk are the ones the last run wrote (nobody removed or edited them). */
export async function reportsThere(
  last: LastRun,
  target: string,
  paths: { md: string; json: string },
): Promise<boolean> {
  const read = async (f: string) => {
    const { root, rel } = reportDoor(target, f);
    const buf = await readIn(root, rel, { maxBytes: Infinity }).catch(() => undefined);
    return buf && sha1(buf);
  };
  return (await read(paths.md)) === last.md && (await read(paths.json)) === last.json;
}

export { sha1 as reportHash };
