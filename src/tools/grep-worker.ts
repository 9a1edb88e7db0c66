/**
 * grep's matching, on a worker thread (off-thread.ts): reads the files it is given and matches
 * their lines with the linear-time engine, then posts the matching lines. Keeps to `node:` modules
 * and re2js so it starts fast; the caller terminates it when the call is stopped.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { RE2JS } from "re2js";

/** What the grep tool sends. */
export interface GrepJob {
  /** RE2 source (grep-pattern.ts) and flags. */
  source: string;
  flags: number;
  /** Absolute paths and the names to print for them. */
  files: Array<{ abs: string; rel: string }>;
  /** Matches past this one are not collected. */
  max: number;
}

/** What it answers: the lines `rel:line: text`, and whether more matched than `max`. */
export interface GrepAnswer {
  matches: string[];
  more: boolean;
}

/** A regular file's text; undefined for anything else (a FIFO opens at once and is skipped). */
function readRegularSync(abs: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(abs, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    if (!fstatSync(fd).isFile()) return undefined;
    return readFileSync(fd).toString("utf8");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The matching lines of the job's files, in order. */
export function grepFiles(job: GrepJob): GrepAnswer {
  const re = RE2JS.compile(job.source, job.flags);
  const matches: string[] = [];
  for (const { abs, rel } of job.files) {
    const text = readRegularSync(abs);
    if (text === undefined || text.includes("\0")) continue; // not a file, or binary
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!re.test(lines[i]!)) continue;
      if (matches.length === job.max) return { matches, more: true };
      matches.push(`${rel}:${i + 1}: ${lines[i]!.slice(0, 300)}`);
    }
  }
  return { matches, more: false };
}

if (parentPort && (workerData as { grep?: GrepJob } | null)?.grep)
  parentPort.postMessage(grepFiles((workerData as { grep: GrepJob }).grep));
