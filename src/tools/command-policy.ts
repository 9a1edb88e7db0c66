/**
 * Pure checks on a shell command before it is spawned (F1): file writes by redirection, oversize
 * commands, commands that reach beyond the workspace and so need a person's approval, and git
 * commands that write a repository (`gitWriteOf`), which only a person may allow.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { parse, type ParseEntry } from "shell-quote";
import { GIT_GLOBAL_VALUE_OPTIONS, gitSubcommandWrites } from "./git-commands.js";

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
  let segments: ParseEntry[][];
  try {
    segments = segmentsOf(trimmed);
  } catch (e) {
    return {
      verdict: "refuse",
      reason: `the command could not be parsed: ${(e as Error).message}`,
    };
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
    while (k < words.length && (ASSIGNMENT.test(words[k]!) || words[k] === "env")) k++;
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

/** A shell variable assignment before a command's name (`GIT_DIR=x git …`). */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** A command's simple commands, split at control operators: each one's words and redirections. */
function segmentsOf(command: string): ParseEntry[][] {
  const segments: ParseEntry[][] = [[]];
  for (const e of parse(command, (name) => `$${name}`)) {
    if (isOp(e) && ["|", "||", "&&", ";", "&", "|&", ";;", "(", ")"].includes(e.op))
      segments.push([]);
    else segments[segments.length - 1]!.push(e);
  }
  return segments;
}

/** A git command in a shell command that writes a repository's git folder (`gitWriteOf`). */
export interface GitWrite {
  /** The git command as written, its words joined: `git -C sub commit -m x`. */
  command: string;
  /** Its subcommand: `commit`. */
  subcommand: string;
}

/**
 * Programs that run the command their arguments name, with the options of each that take a value
 * (skipped with it): `env -u X git commit`, `timeout 5 git commit`, `xargs -n 1 git add`. For
 * `timeout`, the duration is skipped too.
 */
const WRAPPERS: Record<string, readonly string[]> = {
  env: ["-u", "--unset", "-C", "--chdir"],
  command: [],
  exec: ["-a"],
  builtin: [],
  nice: ["-n", "--adjustment"],
  nohup: [],
  time: ["-f", "--format", "-o", "--output"],
  timeout: ["-s", "--signal", "-k", "--kill-after"],
  stdbuf: ["-i", "-o", "-e"],
  setsid: [],
  ionice: ["-c", "-n", "-p", "-P", "-u"],
  xargs: ["-I", "-n", "-L", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter"],
  sudo: ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
  doas: ["-u", "-C"],
};
/** Shells whose `-c` argument is a command read as they would read it. */
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"]);

/**
 * The first git command in `command` that writes a repository's git folder — its refs, index,
 * objects or config (`git commit`, `git checkout`, `git stash`, `git fetch`, `git init`…) — read as
 * the shell reads it: each simple command, after variable assignments and wrappers (`env`,
 * `timeout`, `xargs`…), inside `sh -c '…'`, `eval`, `$(…)`, backquotes and `find -exec`. Undefined
 * when there is none, or when git's subcommand is one keel does not know (an alias): such a
 * command runs, and the sandbox, where `.git` is read-only, refuses its write. A command that
 * cannot be parsed has none (`checkCommand` refuses it). Pure.
 */
export function gitWriteOf(command: string, depth = 0): GitWrite | undefined {
  if (depth > 4) return undefined;
  let segments: ParseEntry[][];
  try {
    segments = segmentsOf(command);
  } catch {
    return undefined;
  }
  for (const seg of segments) {
    const words = seg.filter((e): e is string => typeof e === "string");
    // a substitution inside a word (`"$(git stash)"`) or between backquotes: its own command
    const inner = [
      ...words.flatMap((w) => [...(/\$\((.*)\)/s.exec(w)?.slice(1) ?? [])]),
      ...[...words.join(" ").matchAll(/`([^`]*)`/g)].map((m) => m[1]!),
    ];
    for (const text of inner) {
      const found = gitWriteOf(text, depth + 1);
      if (found) return found;
    }
    const found = gitWriteIn(
      words.map((w) => w.replace(/^`/, "")),
      depth,
    );
    if (found) return found;
  }
  return undefined;
}

/** The git write one simple command's words make, looking through wrappers, shells and `find -exec`. */
function gitWriteIn(words: string[], depth: number): GitWrite | undefined {
  let k = 0;
  for (;;) {
    while (k < words.length && ASSIGNMENT.test(words[k]!)) k++;
    const program = words[k] === undefined ? undefined : path.posix.basename(words[k]!);
    if (program === undefined) return undefined;
    const takesValue = WRAPPERS[program];
    if (takesValue === undefined) break;
    k++;
    while (k < words.length && (words[k]!.startsWith("-") || ASSIGNMENT.test(words[k]!))) {
      if (words[k] === "-S" || words[k] === "--split-string")
        return gitWriteOf(words.slice(k + 1).join(" "), depth + 1); // env -S 'git commit'
      k += takesValue.includes(words[k]!) ? 2 : 1;
    }
    if (program === "timeout") k++; // its duration
  }
  const program = path.posix.basename(words[k]!);
  const args = words.slice(k + 1);
  if (SHELLS.has(program)) {
    const c = args.findIndex((a) => /^-[a-z]*c[a-z]*$/.test(a));
    return c < 0 ? undefined : gitWriteOf(args[c + 1] ?? "", depth + 1);
  }
  if (program === "eval") return gitWriteOf(args.join(" "), depth + 1);
  if (program === "find") {
    const at = args.findIndex((a) => ["-exec", "-execdir", "-ok", "-okdir"].includes(a));
    if (at < 0) return undefined;
    const end = args.findIndex((a, i) => i > at && (a === ";" || a === "+"));
    return gitWriteIn(args.slice(at + 1, end < 0 ? undefined : end), depth);
  }
  if (program !== "git") return undefined;
  return gitSubcommandOf(args);
}

/** The git write of `git <args>`: git's own options skipped, its subcommand asked. */
function gitSubcommandOf(args: string[]): GitWrite | undefined {
  let i = 0;
  while (i < args.length && args[i]!.startsWith("-"))
    i += GIT_GLOBAL_VALUE_OPTIONS.includes(args[i]!) ? 2 : 1;
  const subcommand = args[i];
  if (subcommand === undefined || !gitSubcommandWrites(subcommand, args.slice(i + 1)))
    return undefined;
  return { command: ["git", ...args].join(" "), subcommand };
}
