/**
 * Pure checks on a shell command before it is spawned (F1): file writes by redirection, oversize
 * commands, and commands that reach beyond the workspace and so need a person's approval.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { parse, type ParseEntry } from "shell-quote";

export type CommandVerdict =
  | { verdict: "run" }
  | { verdict: "refuse"; reason: string }
  | { verdict: "approve"; reason: string };

let argMaxCache: number | undefined;

/**
 * The longest command keel spawns. Linux caps one argument (our `bash -c <command>`) at
 * MAX_ARG_STRLEN = 128 KiB and the whole exec at ARG_MAX; we stay a factor 16 under the smaller,
 * because a command that long is a file write in disguise anyway.
 */
export function maxCommandLength(): number {
  if (argMaxCache === undefined) {
    let argMax = 2_097_152;
    try {
      argMax = Number(execFileSync("getconf", ["ARG_MAX"], { encoding: "utf8" }).trim()) || argMax;
    } catch {
      // getconf is missing on some minimal systems; Linux's usual value stands in.
    }
    argMaxCache = Math.floor(Math.min(argMax, 131_072) / 16);
  }
  return argMaxCache;
}

const WRITE_HINT =
  "To create or change a file, call write_file with the path and the full content (or edit_file for a small change); run_command is for running programs.";

/** Programs whose effects reach beyond the workspace's files. */
const NEEDS_APPROVAL = new Set([
  "sudo",
  "su",
  "doas",
  "apt",
  "apt-get",
  "dpkg",
  "dnf",
  "yum",
  "brew",
  "snap",
  "curl",
  "wget",
  "ssh",
  "scp",
  "rsync",
  "docker",
  "podman",
  "kubectl",
  "kill",
  "pkill",
  "killall",
  "shutdown",
  "reboot",
  "systemctl",
  "service",
  "mount",
  "umount",
  "chown",
  "crontab",
  "launchctl",
]);
const INSTALLERS: Record<string, string[]> = {
  npm: ["install", "i", "add", "ci", "uninstall", "publish", "link"],
  pnpm: ["install", "i", "add", "remove", "publish"],
  yarn: ["add", "install", "remove", "publish", "global"],
  pip: ["install", "uninstall"],
  pip3: ["install", "uninstall"],
  cargo: ["install", "publish"],
  gem: ["install"],
  go: ["install"],
  git: ["push", "clone", "fetch", "pull"],
};
/** Commands whose path arguments must stay inside the workspace. */
const PATH_MUTATORS = new Set([
  "rm",
  "mv",
  "cp",
  "chmod",
  "ln",
  "touch",
  "mkdir",
  "rmdir",
  "truncate",
  "dd",
  "install",
]);

const isOp = (e: ParseEntry): e is Extract<ParseEntry, { op: string }> =>
  typeof e === "object" && e !== null && "op" in e;

/**
 * Classifies a command: run it, refuse it (with what to do instead), or ask for approval. `granted`:
 * absolute paths outside the workspace the user opened to commands (`--allow-write`, `--allow-read`).
 */
export function checkCommand(
  command: string,
  workspace: string,
  granted: string[] = [],
): CommandVerdict {
  const trimmed = command.trim();
  if (!trimmed) return { verdict: "refuse", reason: "the command is empty" };
  const limit = maxCommandLength();
  if (trimmed.length > limit) {
    return {
      verdict: "refuse",
      reason: `the command is ${trimmed.length} characters long; run_command accepts at most ${limit}. ${WRITE_HINT}`,
    };
  }
  let entries: ParseEntry[];
  try {
    entries = parse(trimmed, (name) => `$${name}`);
  } catch (e) {
    return {
      verdict: "refuse",
      reason: `the command could not be parsed: ${(e as Error).message}`,
    };
  }

  // Split into simple commands at control operators; look at each one's words and redirections.
  const segments: ParseEntry[][] = [[]];
  for (const e of entries) {
    if (isOp(e) && ["|", "||", "&&", ";", "&", "|&", ";;", "(", ")"].includes(e.op))
      segments.push([]);
    else segments[segments.length - 1]!.push(e);
  }
  for (const seg of segments) {
    for (let i = 0; i < seg.length; i++) {
      const e = seg[i]!;
      if (!isOp(e)) continue;
      if (e.op === "<<" || e.op === "<<<") {
        return {
          verdict: "refuse",
          reason: `here-documents are refused (they are file writes in disguise). ${WRITE_HINT}`,
        };
      }
      if ([">", ">>", ">|", "&>", "&>>"].includes(e.op)) {
        const target = seg[i + 1];
        if (typeof target === "string" && target === "/dev/null") continue;
        return {
          verdict: "refuse",
          reason: `writing a file by shell redirection (${e.op} ${typeof target === "string" ? target : ""}) is refused. ${WRITE_HINT}`,
        };
      }
    }
    const words = seg.filter((e): e is string => typeof e === "string");
    // Skip leading VAR=value assignments and `env`.
    let k = 0;
    while (k < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[k]!) || words[k] === "env"))
      k++;
    const program = words[k] ? path.posix.basename(words[k]!) : undefined;
    if (!program) continue;
    const args = words.slice(k + 1);
    if (program === "tee") {
      return { verdict: "refuse", reason: `writing files with tee is refused. ${WRITE_HINT}` };
    }
    if (NEEDS_APPROVAL.has(program)) {
      return { verdict: "approve", reason: `${program} acts beyond the workspace` };
    }
    const sub = INSTALLERS[program];
    if (sub && args.some((a) => sub.includes(a))) {
      return {
        verdict: "approve",
        reason: `${program} ${args.find((a) => sub.includes(a))} changes things beyond the workspace (network, caches or remotes)`,
      };
    }
    if (PATH_MUTATORS.has(program)) {
      const escaping = args.find((a) => !a.startsWith("-") && escapes(workspace, a, granted));
      if (escaping)
        return {
          verdict: "approve",
          reason: `${program} touches ${escaping}, outside the workspace`,
        };
    }
  }
  return { verdict: "run" };
}

/** Whether a path argument (relative to the workspace) lies outside it and outside every grant. */
function escapes(workspace: string, arg: string, granted: string[]): boolean {
  if (arg.startsWith("~")) return true;
  const abs = path.resolve(workspace, arg);
  return [workspace, ...granted].every((root) => {
    const rel = path.relative(root, abs);
    return rel.startsWith("..") || path.isAbsolute(rel);
  });
}
