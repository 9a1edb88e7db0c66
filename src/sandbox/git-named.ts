/**
 * The workspace paths the person's own git config names as code or config git uses: a file it
 * includes (`include.path`, `includeIf.*.path`), the hooks folder (`core.hooksPath`, often a
 * `.githooks` of the project), and a script a key runs (`alias.lint = !./scripts/lint.sh`,
 * `core.fsmonitor`, a filter or diff driver…). The fixed list (protected.ts) cannot know them, yet
 * a file the agent writes there runs in the person's next git command, outside the sandbox. They are
 * protected like the list's paths: a file tool's change asks a person, a command cannot change one
 * that exists, and one a command makes is removed after it (aftercare).
 *
 * Read wide on purpose, since a miss runs code and a false name only asks a person: every include
 * is read whatever its condition (a branch switch or another folder puts it in force), each
 * repository in the workspace is asked for its own config (`core.hooksPath = .githooks` in the
 * global config names one per repository), and a program value is read as the shell would run it
 * (`programPaths`). One limit keeps the project's own folders free: an argument without the look
 * of a file is not named. Paths are named as written and where their links lead (the file tools
 * act on the latter).
 *
 * `namedByGitConfig` and `programPaths` are pure; `gitNamedPaths` asks git itself (every scope, as
 * the person's git reads it), never waiting long: includes are followed here, only when they are
 * regular files, and one look gives git `LOOK_MS`. Without git nothing is named: nothing would run
 * it.
 */
import { lstatSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, type ParseEntry } from "shell-quote";
import { runGit } from "./host-git.js";
import type { ProtectedPath } from "./protected.js";
import { realTarget } from "./real-path.js";
import { isSmallFile } from "../files/door.js";

/** One entry of `git config --list --show-origin`: the file it is in (absolute), key, value. */
export interface ConfigEntry {
  file: string;
  key: string;
  value: string;
}

/** Keys whose value is a file git reads as config, relative to the folder of the file naming it. */
const INCLUDE = /^include(if\..*)?\.path$/;
/** Keys whose value is a path relative to the worktree's top: hooks, templates, attributes. */
const FOLDERS: Record<string, string> = {
  "core.hookspath": "git runs the hooks in it",
  "init.templatedir": "git copies its hooks into each repository it makes",
  "core.attributesfile": "git attributes pick filters and diff drivers",
};
/**
 * Keys whose value is a program git (or a tool it starts, like git-lfs) runs, mostly through the
 * shell. By name and by the last word of the name, so that a key of a newer git or a tool is in
 * too: `tar.tgz.command`, `sendemail.sendmailCmd`, `lfs.customtransfer.x.path`…
 */
const PROGRAMS =
  /^(alias\..+|pager\..+|core\.(fsmonitor|editor|pager|sshcommand|askpass|gitproxy|alternaterefscommand)|sequence\.editor|diff\.external|interactive\.difffilter|uploadpack\.packobjectshook|gc\.recentobjectshook|submodule\..+\.update|remote\..+\.(receivepack|uploadpack|vcs)|(.+\.)?(cmd|command|program|tool|helper|driver|tunnel|httpd|textconv|clean|smudge|process|smtpserver|sendmailcmd|tocmd|cccmd|browser|defaultkeycommand|authorsprog)|(?!submodule\.).+\.path)$/;

/** Where paths are resolved: the workspace, the worktree's top (git runs programs there), home. */
export interface NamedAt {
  workspace: string;
  top: string;
  home: string;
}

const expandHome = (p: string, home: string) =>
  p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : p;

/** What a shell expansion was parsed as (`programPaths`): its value is not known here. */
const EXPANSION = "\u0001";
/**
 * An argument that may be a file: it has an extension or a leading dot (`lint.sh`, `.ci-hooks`,
 * `tools/x.py`). A word without (`src`, `build`, `web/app`) is taken for a folder: naming the
 * project's folders would hold them read-only for every command. (A command word with a folder in
 * it, and an interpreter's script, are named whatever they look like.)
 */
const FILE_LIKE = /^[^-=][^=]*\.[A-Za-z0-9]{1,8}$|^\.[\w.-]+$/;
/** Programs whose first argument is the script they run (`sh x`, `node tools/gen`, `python3 y`). */
const INTERPRETERS =
  /^(sh|bash|zsh|dash|ksh|fish|node|nodejs|deno|bun|tsx|ts-node|python[\d.]*|pypy[\d.]*|ruby|perl|php|lua|Rscript|pwsh|osascript)$/;
/** Options whose argument is a file of settings or commands (`ssh -F`, `vim -u`, `bash --rcfile`). */
const FILE_OPTIONS = new Set([
  "-F",
  "-u",
  "-x",
  "-f",
  "--file",
  "--rcfile",
  "--init-file",
  "--config",
  "--config-file",
  "--justfile",
  "--homedir",
  "--settings",
]);

/**
 * The words of a program value that may be paths, as written (relative ones from the top, or from
 * a `cd` before them): a command word with a folder in it, an argument that looks like a file
 * (`FILE_LIKE`) or follows an option that takes one (`FILE_OPTIONS`), a file-like value after `=`,
 * a redirection's file, a module `-m` runs, what follows a `$(…)`, `$VAR` or backquote (`"$(git
 * rev-parse --show-toplevel)"/bin/x` is `bin/x`), a glob's folder, and the same inside `sh -c '…'`.
 * A bare command word is found on PATH and is not one. A git alias without `!` runs git: only its
 * `--exec-path` (its `-c` pairs are read as config by `namedByGitConfig`).
 */
export function programPaths(value: string, gitAlias = false): string[] {
  const out = new Set<string>();
  const shell = !gitAlias || value.startsWith("!");
  const words = (command: string, depth: number) => {
    let entries: ParseEntry[];
    try {
      entries = parse(command, (name) => `${EXPANSION}${name}${EXPANSION}`);
    } catch {
      return;
    }
    const cds: string[] = [];
    let commandWord = true;
    let afterCd = false;
    /** The word before: an option (`-F`, `--rcfile`) whose argument may be a file. */
    let option = "";
    /** A redirection came before: the next word is a file, not a command. */
    let redirect = false;
    /** The command is an interpreter whose script has not come yet. */
    let script = false;
    const add = (word: string) => {
      if (word === "" || word === "." || word.includes(EXPANSION) || word.includes("`")) return;
      out.add(word);
      for (const cd of cds) if (!path.isAbsolute(word)) out.add(path.posix.join(cd, word));
    };
    for (const e of entries) {
      if (typeof e !== "string") {
        if ("op" in e && e.op === "glob") {
          const fixed = e.pattern.slice(0, e.pattern.search(/[*?[{]/));
          add(fixed.slice(0, fixed.lastIndexOf("/") + 1)); // its folder
          commandWord = false;
        } else if ("op" in e && /^[<>]/.test(e.op)) redirect = true;
        else commandWord = true; // `&&`, `;`, `|`, `(`: a new command follows
        option = "";
        continue;
      }
      if (redirect) {
        redirect = false;
        add(e);
        continue;
      }
      if (afterCd) {
        if (!e.includes(EXPANSION)) cds.push(e);
        afterCd = false;
        commandWord = false;
        continue;
      }
      const expanded = Math.max(e.lastIndexOf(EXPANSION), e.lastIndexOf("`"), e.lastIndexOf(")"));
      if (expanded >= 0 && e.slice(expanded + 1).startsWith("/")) {
        const rest = e.slice(expanded + 2);
        add(
          e.startsWith(`${EXPANSION}GIT_DIR${EXPANSION}/`) ? path.posix.join(".git", rest) : rest,
        );
      }
      const assigned = e.slice(e.indexOf("=") + 1);
      if (e.includes("=") && FILE_LIKE.test(assigned)) add(assigned);
      if (commandWord) {
        commandWord = false;
        if (e === "cd" || e === "pushd") afterCd = true;
        else if (e.includes("/")) add(e);
        script = INTERPRETERS.test(path.posix.basename(e));
        continue;
      }
      if (depth < 3 && /\s/.test(e)) words(e, depth + 1); // `sh -c 'cd x && ./y'`
      const plain = !e.startsWith("-") && !/[;&|<>]/.test(e);
      if (plain && (FILE_LIKE.test(e) || FILE_OPTIONS.has(option) || (script && option === "")))
        add(e);
      if (plain && (option === "" || option === "-m")) script = false;
      // `python -m tools.fmt` runs tools/fmt.py (or the package tools/fmt)
      if (plain && option === "-m" && /^[\w.]+$/.test(e)) {
        add(`${e.replace(/\./g, "/")}.py`);
        add(`${e.replace(/\./g, "/")}/__main__.py`);
      }
      option = e.startsWith("-") && !e.includes("=") ? e : "";
    }
  };
  if (shell) words(value.replace(/^!/, ""), 0);
  // the folder git runs its programs from
  else for (const m of value.matchAll(/(?:^|\s)--exec-path=(\S+)/g)) out.add(m[1]!);
  return [...out];
}

/** The workspace paths a config names (the module's comment), each once, with why it matters. */
export function namedByGitConfig(
  entries: readonly ConfigEntry[],
  at: NamedAt,
  real = true,
): ProtectedPath[] {
  const named = new Map<string, ProtectedPath>();
  // as written and where its links lead: replacing a link must not unname what it stood for; what
  // is under it too (`node release.js` runs `release.js/index.js` when that is a folder)
  const add = (abs: string, why: string) => {
    for (const p of [path.normalize(abs), real ? realTarget(abs) : undefined]) {
      const rel = p === undefined ? ".." : path.relative(at.workspace, p);
      if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) continue;
      const key = rel.split(path.sep).join("/");
      if (!named.has(key)) named.set(key, { path: key, why });
    }
  };
  const fromTop = (p: string) => path.resolve(at.top, expandHome(p, at.home));
  for (const { file, key, value } of entries) {
    const k = key.toLowerCase();
    if (value === "") continue;
    if (INCLUDE.test(k))
      add(
        path.resolve(path.dirname(file), expandHome(value, at.home)),
        `your git config includes it (${key})`,
      );
    else if (FOLDERS[k] !== undefined) add(fromTop(value), `${FOLDERS[k]} (${key})`);
    else if (PROGRAMS.test(k)) {
      const alias = k.startsWith("alias.");
      for (const word of programPaths(value, alias))
        add(fromTop(word), `your git config runs it (${key})`);
      // a git alias's own config (`-c core.hooksPath=.ci-hooks commit`, `!git -c …`) is config
      if (alias)
        for (const [, k2, v2] of value.matchAll(/(?:^|\s)-c\s*([^=\s]+)=(\S+)/g))
          for (const n of namedByGitConfig([{ file, key: k2!, value: v2! }], at, real))
            if (!named.has(n.path)) named.set(n.path, { ...n, why: `${n.why}, through ${key}` });
    }
  }
  return [...named.values()];
}

/** `git config --list --show-origin -z` output as entries; a relative origin is from `top`. */
export function parseConfigList(out: string, top: string): ConfigEntry[] {
  const entries: ConfigEntry[] = [];
  const fields = out.split("\0");
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i]!;
    // a file, or the person's environment (GIT_CONFIG_COUNT…, `command line:`), read from the top
    const file = origin.startsWith("file:")
      ? path.resolve(top, origin.slice(5))
      : origin.startsWith("command line:")
        ? path.join(top, "(environment)")
        : undefined;
    if (file === undefined) continue;
    const nl = fields[i + 1]!.indexOf("\n");
    const [key, value] =
      nl < 0 ? [fields[i + 1]!, ""] : [fields[i + 1]!.slice(0, nl), fields[i + 1]!.slice(nl + 1)];
    entries.push({ file, key, value });
  }
  return entries;
}

/** What one look over a workspace shares: include files read, and its time for git. */
export interface Look {
  includes: Map<string, ConfigEntry[]>;
  /** When git is asked no more (ms since the epoch): a config a command made can make git wait. */
  deadline: number;
  /** Set when git was cut off or not asked for lack of time: what it would have named is not known. */
  slow?: true;
}

/** How long one look may spend in git, at most. */
const LOOK_MS = 5_000;

export const newLook = (): Look => ({ includes: new Map(), deadline: Date.now() + LOOK_MS });

const git = (cwd: string, args: string[], look: Look, env: Record<string, string> = {}) => {
  const r = runGit(cwd, args, look.deadline - Date.now(), { env });
  if (r.timedOut) look.slow = true;
  return r.stdout;
};

/** How many included files are read at most beyond those in force (an include may include). */
const MAX_INCLUDES = 50;

/**
 * The config git reads in `dir`, and every file an include names whatever its condition, followed
 * by keel (read as git reads a file given with `-f`), only when it is a small regular file: git
 * would wait forever on a FIFO a command made.
 */
function configEntries(
  dir: string,
  top: string,
  home: string,
  look: Look,
  env: Record<string, string> = {},
): ConfigEntry[] | undefined {
  const out = git(dir, ["config", "--list", "--show-origin", "--no-includes", "-z"], look, env);
  if (out === undefined) return undefined;
  const entries = parseConfigList(out, top);
  const read = new Set(entries.map((e) => e.file));
  for (let i = 0; i < entries.length && read.size < MAX_INCLUDES; i++) {
    const { file, key, value } = entries[i]!;
    if (!INCLUDE.test(key.toLowerCase()) || value === "") continue;
    const included = path.resolve(path.dirname(file), expandHome(value, home));
    if (read.has(included)) continue;
    read.add(included);
    let more = look.includes.get(included);
    if (more === undefined) {
      const args = ["config", "-f", included, "--list", "--show-origin", "--no-includes", "-z"];
      const list = isSmallFile(included) ? git(dir, args, look, env) : undefined;
      look.includes.set(included, (more = list === undefined ? [] : parseConfigList(list, top)));
    }
    entries.push(...more);
  }
  return entries;
}

/**
 * The workspace paths the git config in force in `dir` (the workspace, or a repository in it)
 * names (`namedByGitConfig`), asked of git. `top`: the worktree's top when known (else git is
 * asked); `look`: what one look shares. None when git is not installed or cannot read it.
 */
export function gitNamedPaths(
  workspace: string,
  dir = workspace,
  top?: string,
  look: Look = newLook(),
): ProtectedPath[] {
  const worktree =
    top ?? (git(dir, ["rev-parse", "--show-toplevel"], look)?.replace(/\n$/, "") || dir);
  const home = os.homedir();
  const entries = configEntries(dir, worktree, home, look) ?? [];
  return namedByGitConfig(entries, { workspace, top: worktree, home });
}

/**
 * The person's own config (system, global, the environment's, their includes), read where no
 * repository is — a fresh empty folder git may not look above — so that nothing a command leaves
 * in the workspace (a `.git` git rejects) changes what is read. None when git did not answer.
 */
export function personalConfig(look: Look): ConfigEntry[] | undefined {
  const dir = mkdtempSync(path.join(os.tmpdir(), "keel-git-"));
  try {
    return configEntries(dir, dir, os.homedir(), look, {
      GIT_CEILING_DIRECTORIES: path.dirname(dir),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Where `personalNames` resolves relative names: a top no path on disk is under. */
const ANY_TOP = path.join(path.sep, "\0keel-any-repository");

/**
 * The names the person's own config (`personalConfig`: global, system, the environment's) gives
 * relative to a repository's top, for every repository there is or will be (a global
 * `core.hooksPath = .githooks` names `.githooks` in each, `app/` a command makes later too):
 * workspace-relative at any depth (`deep`). Names it gives as absolute paths are `named` already.
 */
export const personalNames = (personal: readonly ConfigEntry[]): ProtectedPath[] =>
  namedByGitConfig(personal, { workspace: ANY_TOP, top: ANY_TOP, home: os.homedir() }, false).map(
    (n) => ({ ...n, deep: true }),
  );

/**
 * The folder whose git config applies to a workspace-relative path: the nearest one above it in
 * the workspace that holds a `.git`, else the workspace (git then finds any repository around it).
 */
export function configDirOf(workspace: string, rel: string): string {
  for (let dir = path.dirname(path.join(workspace, rel)); ; dir = path.dirname(dir)) {
    const inside = path.relative(workspace, dir);
    if (inside.startsWith("..") || path.isAbsolute(inside)) return workspace;
    if (lstatSync(path.join(dir, ".git"), { throwIfNoEntry: false })) return dir;
    if (inside === "") return workspace;
  }
}
