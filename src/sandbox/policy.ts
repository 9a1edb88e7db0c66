/**
 * The OS sandbox's policy as data, and the pure functions that turn it into the configuration of
 * `@anthropic-ai/sandbox-runtime` for one command (F1: the workspace promise kept by the kernel).
 *
 * Reads: nothing of the machine is readable except the system's own folders, the toolchains on
 * PATH, the workspace and what the user allowed. Hidden folders appear empty inside the sandbox
 * (bubblewrap mounts an empty tmpfs over them), so a write there succeeds and is discarded when the
 * command ends. Writes: the workspace and what the user allowed. Network: none, except hosts the user
 * allowed, plus the package registries for a command a person approved (an install).
 */
import path from "node:path";
import { COMMAND_PROTECTED, PLACEHOLDER } from "./protected.js";

/** What the user allowed beyond the defaults (flags, settings). Paths absolute or `~/…`. */
export interface SandboxGrants {
  allowRead: string[];
  allowWrite: string[];
  allowHosts: string[];
}

export const NO_GRANTS: SandboxGrants = { allowRead: [], allowWrite: [], allowHosts: [] };

/** How a run isolates its commands. */
export interface Isolation {
  grants: SandboxGrants;
  /** The user opted out (`--run-commands-unsandboxed`): commands run without the OS sandbox. */
  unsandboxed: boolean;
}

/** The system's own folders: readable by every command. */
export const SYSTEM_READ: Record<"linux" | "darwin", string[]> = {
  linux: [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
    "/snap",
    "/var/lib/dpkg",
  ],
  darwin: [
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library",
    "/Applications/Xcode.app",
    "/opt/homebrew",
    "/usr/local",
    "/private/etc",
    "/etc",
    "/nix/store",
  ],
};

/**
 * Toolchain managers that live in the home folder. A PATH entry under one of these makes the whole
 * root readable (pyenv's shims read `versions/`, nvm's node reads its `lib/`); any other PATH entry in
 * the home folder is readable by itself only.
 */
export const HOME_TOOLCHAINS = [
  ".pyenv",
  ".nvm",
  ".volta",
  ".fnm",
  ".asdf",
  ".rbenv",
  ".goenv",
  ".sdkman",
  ".cargo",
  ".rustup",
  ".bun",
  ".deno",
  ".local/share/pnpm",
  ".local/share/fnm",
  ".local/share/mise",
  ".juliaup",
  "miniconda3",
  "anaconda3",
  ".pixi",
];

/** Package registries an approved command (an install) may reach, besides the user's hosts. */
export const INSTALL_HOSTS = [
  "registry.npmjs.org",
  "registry.yarnpkg.com",
  "pypi.org",
  "files.pythonhosted.org",
  "crates.io",
  "index.crates.io",
  "static.crates.io",
  "proxy.golang.org",
  "sum.golang.org",
  "rubygems.org",
  "github.com",
  "codeload.github.com",
  "objects.githubusercontent.com",
];

/** What the policy needs to know about the machine. */
export interface Machine {
  platform: NodeJS.Platform;
  home: string;
  /** The PATH commands get. */
  pathVar: string;
  /** The real path of the running node binary (its install prefix is a toolchain). */
  nodeBinary: string;
  /** Folders the sandbox itself needs readable (its seccomp helper). */
  runtimeDirs: string[];
}

/** The filesystem part of sandbox-runtime's configuration for a command in `workspace`. */
export interface FilesystemPolicy {
  denyRead: string[];
  allowRead: string[];
  allowWrite: string[];
  denyWrite: string[];
}

/** Expands `~` and makes a path absolute (relative ones against the workspace). */
export function absoluteGrant(p: string, workspace: string, home: string): string {
  if (p === "~") return home;
  if (p.startsWith("~/")) return path.join(home, p.slice(2));
  return path.resolve(workspace, p);
}

/** The folders readable by every command on this machine, besides the workspace and grants. */
export function readableRoots(m: Machine): string[] {
  const roots = new Set(SYSTEM_READ[m.platform === "darwin" ? "darwin" : "linux"]);
  roots.add(path.dirname(path.dirname(m.nodeBinary)));
  for (const dir of m.runtimeDirs) roots.add(dir);
  for (const entry of m.pathVar.split(path.delimiter)) {
    if (!path.isAbsolute(entry)) continue;
    const inHome = path.relative(m.home, entry);
    if (inHome.startsWith("..") || path.isAbsolute(inHome) || inHome === "") {
      roots.add(entry);
      continue;
    }
    const manager = HOME_TOOLCHAINS.find((t) => inHome === t || inHome.startsWith(`${t}/`));
    roots.add(manager ? path.join(m.home, manager) : entry);
  }
  return [...roots].sort();
}

/** The filesystem policy of one command; `denyWrite`: absolute paths (see `sandboxDenyPaths`). */
export function filesystemPolicy(
  workspace: string,
  grants: SandboxGrants,
  m: Machine,
  denyWrite: string[] = [],
): FilesystemPolicy {
  const abs = (p: string) => absoluteGrant(p, workspace, m.home);
  const writable = [workspace, ...grants.allowWrite.map(abs)];
  return {
    denyRead: ["/"],
    allowRead: [...readableRoots(m), ...writable, ...grants.allowRead.map(abs)],
    allowWrite: writable,
    denyWrite,
  };
}

/** The hosts one command may reach. */
export function allowedHosts(grants: SandboxGrants, approved: boolean): string[] {
  return approved ? [...new Set([...grants.allowHosts, ...INSTALL_HOSTS])] : grants.allowHosts;
}

/** What a sandboxed command did that the model should hear about. */
export interface CommandTrace {
  command: string;
  output: string;
  /** Hosts the sandbox's proxy refused while it ran. */
  blockedHosts: string[];
  /** What aftercare removed or put back after the command (aftercare.ts). */
  removed: string[];
}

/** An output line saying a write failed (a read-only path, a folder where a file was meant). */
const WRITE_FAILED =
  /read-only|permission denied|operation not permitted|is a directory|not a directory|EROFS|EACCES|EPERM|EISDIR|cannot (create|open|overwrite|remove|move)/i;

/** Outputs of a program that found no network (DNS fails first inside the sandbox). */
const NO_NETWORK =
  /EAI_AGAIN|ENOTFOUND|ENETUNREACH|Could not resolve host|Temporary failure in name resolution|Name or service not known|getaddrinfo/;

/**
 * What a command's output needs added so the model understands the sandbox: the paths the command
 * named that lie outside everything it may see (they looked empty or missing, and writes there were
 * discarded), the hosts it was refused, protected files, and what keel removed. Empty when the
 * sandbox did not get in the way.
 */
export function sandboxNotes(
  t: CommandTrace,
  workspace: string,
  policy: FilesystemPolicy,
  home: string,
): string {
  const notes: string[] = [];
  const one = <T>(list: T[], a: string, b: string) => (list.length === 1 ? a : b);
  const hidden = hiddenPaths(t.command, workspace, policy, home);
  if (hidden.length > 0) {
    notes.push(
      `[sandbox] Commands run in keel's OS sandbox and see only the workspace and the system's folders. ${hidden.join(", ")} ${one(hidden, "is", "are")} outside them: hidden from the command (it sees nothing there), and anything written there is discarded. Work inside the workspace. If the task really needs ${one(hidden, "that path", "those paths")}, say so in your answer: the user can allow ${one(hidden, "it", "them")} with --allow-read PATH (or --allow-write PATH).`,
    );
  }
  if (t.blockedHosts.length > 0) {
    notes.push(
      `[sandbox] The network is closed to commands: ${t.blockedHosts.join(", ")} ${one(t.blockedHosts, "was", "were")} blocked. If the task needs ${one(t.blockedHosts, "it", "them")}, say so in your answer: the user can allow a host with --allow-host HOST.`,
    );
  } else if (NO_NETWORK.test(t.output)) {
    notes.push(
      "[sandbox] The network is closed to commands (names do not resolve). If the task needs a host, say so in your answer: the user can allow it with --allow-host HOST.",
    );
  }
  // Named by the command, or by a line saying a write failed: a listing (`ls -a`) names them all.
  // `.git` by a failed write only: a command that reads git (or names `.git`) is told nothing.
  const failed = t.output
    .split("\n")
    .filter((l) => WRITE_FAILED.test(l))
    .join("\n");
  const touched = COMMAND_PROTECTED.filter((p) => {
    const at = path.join(workspace, p);
    return (
      policy.denyWrite.some((d) => d === at || d === path.join(at, PLACEHOLDER)) &&
      new RegExp(`(^|[^\\w.-])${p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^\\w.-])`).test(
        p === ".git" ? failed : `${t.command}\n${failed}`,
      )
    );
  });
  if (touched.includes(".git"))
    notes.push(
      "[sandbox] .git is read-only to commands, in every repository here: a command that changes a repository (commit, checkout, stash, fetch…) runs only when a person approves it, and keel asks when it sees one. If the task needs one, say in your answer which git command is needed.",
    );
  const others = touched.filter((p) => p !== ".git");
  if (others.length > 0) {
    notes.push(
      `[sandbox] ${others.join(", ")} ${one(others, "is", "are")} read-only to commands: programs outside the sandbox (git, shells, editors, MCP clients) run what is there, and keel reads its project settings from .keel. If the task needs ${one(others, "it", "them")} changed, say so in your answer, or write the file with write_file (a person must approve it).`,
    );
  }
  // aftercare's own notes are in parentheses: what it could not do, not something it removed
  const removed = t.removed.filter((r) => !r.startsWith("("));
  if (removed.length > 0) {
    const back = removed.filter((r) => r.includes("put back")).length;
    const did =
      back === 0 ? "removed" : back === removed.length ? "put back" : "removed or put back";
    notes.push(
      `[sandbox] keel ${did} ${removed.join(", ")}: a program outside the sandbox (git, a shell, an editor) would run ${one(removed, "it", "them")}. Do not set up git hooks, commands in git's config, or editor and shell start-up files.`,
    );
  }
  for (const r of t.removed.filter((r) => r.startsWith("(")))
    notes.push(`[sandbox] ${r.slice(1, r.endsWith(")") ? -1 : undefined)}.`);
  return notes.join("\n");
}

const PATH_TOKEN = /(?:^|[\s'"=:(<>|;&`])((?:~|\.\.|\/)[^\s'"():;,|&<>`]*)/g;

/** Paths named in a command that the policy does not let it see. */
export function hiddenPaths(
  command: string,
  workspace: string,
  policy: FilesystemPolicy,
  home: string,
): string[] {
  const visible = [...policy.allowRead, ...policy.allowWrite];
  const out = new Set<string>();
  for (const match of command.matchAll(PATH_TOKEN)) {
    const token = match[1]!;
    // "/" alone shows the system's folders; "//host" is a URL's, not a path; a backslash is a
    // pattern's (`.replace(/\n/g, …)`, `sed '/^\s*$/d'`), not a path's.
    if (
      token === "/" ||
      token.startsWith("//") ||
      token === "/dev" ||
      token.startsWith("/dev/") ||
      token.includes("\\")
    )
      continue;
    // /proc/<pid>/root and /cwd lead to the root the process sees: inside, the sandbox's own.
    if (/^\/proc\/[^/]+\/(?:root|cwd)(?:\/|$)/.test(token)) {
      out.add(token);
      continue;
    }
    if (token.startsWith("/proc")) continue;
    const abs = absoluteGrant(token, workspace, home);
    if (!visible.some((root) => abs === root || abs.startsWith(root + path.sep))) out.add(token);
  }
  return [...out];
}
