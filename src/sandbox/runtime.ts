/**
 * The OS sandbox at work: whether it runs on this machine (probed once, for real), and the argv and
 * environment that run one command inside it with `policy.ts`'s rules. Built on
 * `@anthropic-ai/sandbox-runtime` (bubblewrap on Linux, sandbox-exec on macOS).
 *
 * sandbox-runtime is process-wide (one set of network proxies per process), so this module keeps
 * the one initialisation and the hosts its proxies refused; everything per command (the workspace,
 * the grants, the host allow-list) goes with the command.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import type { SandboxManager as Manager } from "@anthropic-ai/sandbox-runtime";
import { readEnv } from "../env.js";
import { cleanAfter } from "./aftercare.js";
import { gitIdentity } from "./host-git.js";
import { markWorkspace, nestedDenies } from "./look.js";
import { sandboxDenyPaths } from "./protected.js";
import { clearLeftStandIns, noteStandIns } from "./stand-in-records.js";
import { standIns, withoutStandIns } from "./stand-ins.js";
import {
  allowedHosts,
  filesystemPolicy,
  sandboxNotes,
  NO_GRANTS,
  type FilesystemPolicy,
  type Machine,
  type SandboxGrants,
} from "./policy.js";

/** Whether a path leads to a folder; not when it cannot be looked at (a link loop a command made). */
const isDirectory = (p: string) => {
  try {
    return statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
};

/** Whether commands can run in the OS sandbox here, and what to install when they cannot. */
export type SandboxStatus =
  | { ok: true; platform: NodeJS.Platform; detail: string }
  | { ok: false; platform: NodeJS.Platform; reason: string; fix: string };

/** The Debian/Ubuntu packages sandbox-runtime needs on Linux. */
export const LINUX_PACKAGES = "bubblewrap socat ripgrep";

const FIX: Record<string, string> = {
  linux: `install the helpers (Debian/Ubuntu: apt-get install ${LINUX_PACKAGES}; Fedora: dnf install ${LINUX_PACKAGES}) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ also kernel.apparmor_restrict_unprivileged_userns=0)`,
  darwin: "sandbox-exec ships with macOS; check that /usr/bin/sandbox-exec exists",
  other:
    "keel has no OS sandbox on this system; run keel under WSL 2 or Linux, or accept the risk with --run-commands-unsandboxed",
};

/** sandbox-runtime, loaded on first use (it costs a CLI start ~0.15 s that most commands never need). */
let loaded: Promise<typeof Manager> | undefined;
const sandboxManager = () =>
  (loaded ??= import("@anthropic-ai/sandbox-runtime").then((m) => m.SandboxManager));

let status: Promise<SandboxStatus> | undefined;
/** Hosts the proxies refused, collected per running command. */
const collectors = new Set<string[]>();

/**
 * sandbox-runtime's proxies (and, on Linux, their socat bridges) keep a process alive, so they run
 * only while commands do: started on demand, stopped a moment after the last command ends. Starting
 * and stopping are one chain of steps, each after the one before: a stop that has begun finishes
 * before the next start, and a stop whose turn comes while a command holds the sandbox does nothing,
 * so a command never meets a sandbox that is going away.
 */
const IDLE_MS = 1000;
let lifecycle: Promise<unknown> = Promise.resolve();
let initialized = false;
let active = 0;
let idle: NodeJS.Timeout | undefined;

/** Runs one lifecycle step after the others. */
function step<T>(fn: () => Promise<T>): Promise<T> {
  const next = lifecycle.then(fn);
  lifecycle = next.catch(() => undefined);
  return next;
}

/** The sandbox, started if it is not; call with `active` already counting the caller. */
function start(): Promise<void> {
  clearTimeout(idle);
  return step(async () => {
    if (!initialized) {
      await startManager();
      initialized = true;
    }
  });
}

async function startManager(): Promise<void> {
  const SandboxManager = await sandboxManager();
  // sandbox-runtime stops itself on SIGINT and SIGTERM (and so keeps the process alive on SIGTERM);
  // keel has its own Ctrl-C handling (the step in flight finishes) and stops the sandbox on exit.
  const before = { SIGINT: process.listeners("SIGINT"), SIGTERM: process.listeners("SIGTERM") };
  await SandboxManager.initialize(
    {
      network: { allowedDomains: [], deniedDomains: [] },
      filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
    },
    ({ host, port }) => {
      for (const c of collectors) c.push(port ? `${host}:${port}` : host);
      return Promise.resolve(false);
    },
  );
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    for (const l of process.listeners(signal))
      if (!before[signal].includes(l)) process.removeListener(signal, l);
}

function release(): void {
  active -= 1;
  if (active > 0) return;
  clearTimeout(idle);
  idle = setTimeout(() => void closeSandbox(), IDLE_MS);
  idle.unref();
}

/** Stops the sandbox's proxies now (the CLI calls it before exiting); the next command restarts them. */
export function closeSandbox(): Promise<void> {
  clearTimeout(idle);
  return step(async () => {
    if (!initialized || active > 0) return;
    initialized = false;
    await (await sandboxManager()).reset();
  });
}

/**
 * Probes the OS sandbox once per process: the helper binaries, then one real sandboxed command
 * (user namespaces can be off even where bubblewrap is installed). Never throws.
 */
export function probeSandbox(): Promise<SandboxStatus> {
  return (status ??= probe());
}

async function probe(): Promise<SandboxStatus> {
  const platform = process.platform;
  const fix = FIX[platform] ?? FIX.other!;
  if (platform !== "linux" && platform !== "darwin") {
    return { ok: false, platform, reason: `there is no OS sandbox for ${platform}`, fix };
  }
  let SandboxManager: typeof Manager;
  try {
    SandboxManager = await sandboxManager();
  } catch (e) {
    return {
      ok: false,
      platform,
      reason: `sandbox-runtime did not load: ${(e as Error).message}`,
      fix,
    };
  }
  const deps = SandboxManager.checkDependencies();
  if (deps.errors.length > 0) {
    return { ok: false, platform, reason: deps.errors.join("; "), fix };
  }
  active += 1;
  // The trial runs in a folder of its own: sandbox-runtime protects the dotfiles of a writable
  // working directory with placeholders, which must not appear in the user's folder (nor be
  // removed under another keel process's feet).
  const dir = mkdtempSync(path.join(tmpdir(), "keel-probe-"));
  try {
    await start();
    const trial = await SandboxManager.wrapWithSandbox("true", "bash", {
      filesystem: filesystemPolicy(dir, NO_GRANTS, machine()),
    });
    const run = spawnSync("bash", ["-c", trial], { cwd: dir, encoding: "utf8", timeout: 20_000 });
    SandboxManager.cleanupAfterCommand();
    if (run.status !== 0) {
      const why = (run.stderr || run.error?.message || `exit ${run.status}`).trim().slice(-400);
      return { ok: false, platform, reason: `a trial command failed in the sandbox: ${why}`, fix };
    }
  } catch (e) {
    return { ok: false, platform, reason: (e as Error).message, fix };
  } finally {
    release();
    rmSync(dir, { recursive: true, force: true });
  }
  const version = platform === "linux" ? bwrapVersion() : "sandbox-exec";
  return {
    ok: true,
    platform,
    detail: `${version}; ${deps.warnings.length ? `warnings: ${deps.warnings.join("; ")}` : "no warnings"}`,
  };
}

function bwrapVersion(): string {
  const r = spawnSync("bwrap", ["--version"], { encoding: "utf8" });
  return r.stdout?.trim() || "bubblewrap";
}

/** This machine as the policy sees it. */
export function machine(): Machine {
  const runtimeRoot = path.dirname(
    path.dirname(createRequire(import.meta.url).resolve("@anthropic-ai/sandbox-runtime")),
  );
  return {
    platform: process.platform,
    home: homedir(),
    pathVar: readEnv().commandEnv.PATH ?? "/usr/bin:/bin",
    nodeBinary: realpathSync(process.execPath),
    runtimeDirs: [path.join(runtimeRoot, "vendor")],
  };
}

/**
 * What the sandbox itself needs visible besides its seccomp helper: on Linux, the Unix sockets of its
 * network bridges (they live in the temp folder, which the policy hides).
 */
function runtimePaths(SandboxManager: typeof Manager, m: Machine): string[] {
  const sockets = [
    SandboxManager.getLinuxHttpSocketPath(),
    SandboxManager.getLinuxSocksSocketPath(),
  ];
  return [...m.runtimeDirs, ...sockets.filter((p): p is string => Boolean(p))];
}

let wrapping: Promise<unknown> = Promise.resolve();
let neutralDir: string | undefined;

/**
 * Runs a wrap with the process's working directory outside the workspace. sandbox-runtime adds its
 * own write protections for dotfiles of the process's working directory (`.bashrc`, `.vscode`, …),
 * and on Linux protects a missing one with a placeholder device file for as long as the command
 * runs — in the workspace that breaks `git add -A`. keel protects the workspace's own risky paths
 * itself (`sandboxDenyPaths`). Wraps are serialised so the directory change never interleaves;
 * where the process cannot change directory (a worker thread) it wraps where it is.
 */
async function outsideWorkspace<T>(workspace: string, wrap: () => Promise<T>): Promise<T> {
  const turn = wrapping.then(async () => {
    const cwd = process.cwd();
    const inside = cwd === workspace || cwd.startsWith(workspace + path.sep);
    if (!inside || !("chdir" in process)) return wrap();
    const neutral = (neutralDir ??= mkdtempSync(path.join(tmpdir(), "keel-wrap-")));
    try {
      process.chdir(neutral);
    } catch {
      return wrap();
    }
    try {
      return await wrap();
    } finally {
      process.chdir(cwd);
    }
  });
  wrapping = turn.catch(() => undefined);
  return turn;
}

/** One command, ready to spawn: `argv[0]` with the rest as arguments, in `env`. */
export interface PreparedCommand {
  argv: [string, ...string[]];
  env: Record<string, string>;
  /**
   * After the command: undoes what it may not leave behind (git hooks and risky git config in a
   * repository it created) and returns what the model should be told; releases the command's
   * network list. Idempotent.
   */
  finish(output: string): string;
  /** The command's output as the model is shown it (the sandbox's stand-in folders left out). */
  shown?(output: string): string;
}

/** The names at a folder's top level (none when it cannot be read). */
function topLevel(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** How one command runs: in the OS sandbox with these grants, or (opted out / unavailable) without. */
export interface CommandRun {
  workspace: string;
  grants: SandboxGrants;
  /** A person approved this command (an install): the package registries are reachable. */
  approved: boolean;
  sandboxed: boolean;
  /**
   * A person approved this command's write to git (tools/permissions.ts): the repositories' git
   * folders are writable to it, but for their hooks, configs and the other parts the list protects.
   * Otherwise every git folder in the workspace is read-only, and a repository it makes is removed.
   */
  gitWritable?: boolean;
}

/**
 * The argv and environment of one command. In the sandbox the environment is the one keel passes
 * commands (no API keys) plus the sandbox's proxy settings; outside it, the same environment.
 */
export async function prepareCommand(command: string, run: CommandRun): Promise<PreparedCommand> {
  const env = readEnv().commandEnv;
  if (!run.sandboxed) return { argv: ["bash", "-c", command], env, finish: () => "" };
  const gitWritable = run.gitWritable === true;
  const m = machine();
  const commandId = randomBytes(16).toString("base64url");
  const hosts = allowedHosts(run.grants, run.approved);
  active += 1;
  const records = readEnv().standInRecords;
  // a keel killed mid-command left its stand-ins: gone before the look, which would hold them
  clearLeftStandIns(records, run.workspace);
  const marks = markWorkspace(run.workspace);
  let wrapped: string;
  let fs: FilesystemPolicy;
  /** The missing protected paths an empty folder holds while the command runs. */
  let held: string[] = [];
  /** Drops the note of them (stand-in-records.ts) once the runtime has removed them. */
  let forget = () => {};
  let SandboxManager: typeof Manager;
  try {
    SandboxManager = await sandboxManager();
    await start();
    // macOS's profile refuses a path whether or not it exists; bubblewrap needs a placeholder.
    const exists = (rel: string) =>
      m.platform === "darwin" || existsSync(path.join(run.workspace, rel));
    const denied = sandboxDenyPaths(
      run.workspace,
      exists,
      isDirectory(path.join(run.workspace, ".git")),
      nestedDenies(marks, run.workspace, gitWritable),
      gitWritable,
    );
    held = standIns(run.workspace, denied); // none on macOS: its profile needs no placeholders
    fs = filesystemPolicy(
      run.workspace,
      run.grants,
      { ...m, runtimeDirs: runtimePaths(SandboxManager, m) },
      denied,
    );
    wrapped = await outsideWorkspace(run.workspace, () =>
      SandboxManager.wrapWithSandbox(command, "bash", { filesystem: fs }, undefined, {
        commandId,
        commandText: command,
      }),
    );
    if (hosts.length > 0) {
      SandboxManager.registerCommandNetworkLists(commandId, { allowedDomains: hosts });
    }
    forget = noteStandIns(records, run.workspace, held);
  } catch (e) {
    release();
    throw e;
  }
  const blocked: string[] = [];
  collectors.add(blocked);
  let notes: string | undefined;
  return {
    // Not `exec`ed by bash: bubblewrap runs with --die-with-parent, and its parent must be this
    // detached shell, not keel, so a command outlives a crash of keel as unsandboxed ones do (the
    // journal then waits for it).
    argv: ["bash", "-c", `${wrapped}\nexit $?`],
    // git's reading commands (status, diff) take no lock they could not get in a read-only `.git`;
    // a git write a person approved commits as them
    env: gitWritable
      ? { ...env, ...gitIdentity(run.workspace) }
      : { ...env, GIT_OPTIONAL_LOCKS: "0" },
    shown: (output) =>
      withoutStandIns(output, held, run.workspace, marks.nested, topLevel(run.workspace)),
    finish: (output) => {
      if (notes !== undefined) return notes;
      collectors.delete(blocked);
      SandboxManager.unregisterCommandNetworkLists(commandId);
      SandboxManager.cleanupAfterCommand();
      forget();
      release();
      const trace = {
        command,
        output,
        blockedHosts: [...new Set(blocked)],
        removed: cleanAfter(run.workspace, marks, undefined, gitWritable),
      };
      return (notes = sandboxNotes(trace, run.workspace, fs, m.home));
    },
  };
}

/**
 * The one line a run starts with when its commands are not sandboxed (undefined when they are):
 * the user opted out, or the OS cannot sandbox and every command will need a person.
 */
export async function isolationNotice(unsandboxed: boolean): Promise<string | undefined> {
  if (unsandboxed) {
    return "commands run WITHOUT the OS sandbox (--run-commands-unsandboxed): they can read and write all your files";
  }
  const s = await probeSandbox();
  if (s.ok) return undefined;
  return `keel cannot sandbox commands on this machine (${s.reason}). Every command will need your approval, and runs without a person (--json, CI, Studio without interrupts) refuse commands. To fix: ${s.fix}. To run commands unsandboxed anyway: --run-commands-unsandboxed`;
}
