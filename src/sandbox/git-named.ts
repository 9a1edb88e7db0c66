/**
 * The workspace paths the person's own git config names as code or config git uses: a file it
 * includes (`include.path`, `includeIf.*.path`), the hooks folder (`core.hooksPath`, often a
 * `.githooks` of the project), and a script a key runs (`alias.lint = !./scripts/lint.sh`,
 * `core.fsmonitor`, a filter or diff driver…). The fixed list (protected.ts) cannot know them, yet
 * a file the agent writes there runs in the person's next git command, outside the sandbox. They are
 * protected like the list's paths: a file tool's change asks a person, a command cannot change one
 * that exists, and one a command makes is removed after it (aftercare).
 *
 * `namedByGitConfig` is pure; `gitNamedPaths` asks git itself for the config (every scope, includes
 * followed, as the person's git reads it). Without git nothing is named: nothing would run it.
 */
import { spawnSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { parse } from "shell-quote";
import type { ProtectedPath } from "./protected.js";

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
 * Keys whose value is a program git runs (through the shell where it has arguments). Lower case,
 * a subsection in the middle as `.+`.
 */
const PROGRAMS =
  /^(core\.(fsmonitor|editor|pager|sshcommand|askpass|gitproxy)|sequence\.editor|gpg(\..+)?\.program|gpg\.ssh\.defaultkeycommand|credential(\..+)?\.helper|alias\..+|diff\.external|diff\..+\.(command|textconv)|filter\..+\.(clean|smudge|process)|merge\..+\.driver|(merge|diff)tool\..+\.(cmd|path)|pager\..+|interactive\.difffilter|uploadpack\.packobjectshook|gc\.recentobjectshook|hook\..+\.command|sendemail\.(.+\.)?smtpserver|browser\..+\.(cmd|path)|man\..+\.(cmd|path)|remote\..+\.(receivepack|uploadpack))$/;

/** Where paths are resolved: the workspace, the worktree's top (git runs programs there), home. */
export interface NamedAt {
  workspace: string;
  top: string;
  home: string;
}

const expandHome = (p: string, home: string) =>
  p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : p;

/** A path as workspace-relative with `/`, or undefined when it is outside or the workspace itself. */
function inside(workspace: string, abs: string): string | undefined {
  const rel = path.relative(workspace, abs);
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join("/");
}

/**
 * The words of a program value that are paths: a word with a `/` (a bare name is looked up on
 * PATH), not an option, not a variable git or the shell fills in.
 */
function pathWords(value: string): string[] {
  const command = value.startsWith("!") ? value.slice(1) : value;
  return parse(command)
    .filter((w): w is string => typeof w === "string")
    .filter((w) => w.includes("/") && !w.startsWith("-") && !w.includes("$"));
}

/** The workspace paths a config names (the module's comment), each once, with why it matters. */
export function namedByGitConfig(entries: readonly ConfigEntry[], at: NamedAt): ProtectedPath[] {
  const named = new Map<string, string>();
  const add = (abs: string, why: string) => {
    const rel = inside(at.workspace, abs);
    if (rel !== undefined && !named.has(rel)) named.set(rel, why);
  };
  for (const { file, key, value } of entries) {
    const k = key.toLowerCase();
    if (value === "") continue;
    if (INCLUDE.test(k))
      add(
        path.resolve(path.dirname(file), expandHome(value, at.home)),
        `your git config includes it (${key})`,
      );
    else if (FOLDERS[k] !== undefined)
      add(path.resolve(at.top, expandHome(value, at.home)), `${FOLDERS[k]} (${key})`);
    else if (PROGRAMS.test(k))
      for (const word of pathWords(value))
        add(path.resolve(at.top, expandHome(word, at.home)), `your git config runs it (${key})`);
  }
  return [...named].map(([p, why]) => ({ path: p, why }));
}

/** `git config --list --show-origin -z` output as entries; a relative origin is from `top`. */
export function parseConfigList(out: string, top: string): ConfigEntry[] {
  const entries: ConfigEntry[] = [];
  const fields = out.split("\0");
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i]!;
    if (!origin.startsWith("file:")) continue;
    const nl = fields[i + 1]!.indexOf("\n");
    const [key, value] =
      nl < 0 ? [fields[i + 1]!, ""] : [fields[i + 1]!.slice(0, nl), fields[i + 1]!.slice(nl + 1)];
    entries.push({ file: path.resolve(top, origin.slice(5)), key, value });
  }
  return entries;
}

const git = (workspace: string, args: string[]) => {
  const r = spawnSync("git", args, {
    cwd: workspace,
    encoding: "utf8",
    timeout: 10_000,
    env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" },
  });
  return r.status === 0 ? r.stdout : undefined;
};

/**
 * The workspace paths the git config in force there names (`namedByGitConfig`), asked of git. None
 * when git is not installed or cannot read the config.
 */
export function gitNamedPaths(workspace: string): ProtectedPath[] {
  const top = git(workspace, ["rev-parse", "--show-toplevel"])?.replace(/\n$/, "") || workspace;
  const out = git(workspace, ["config", "--list", "--show-origin", "--includes", "-z"]);
  if (out === undefined) return [];
  return namedByGitConfig(parseConfigList(out, top), { workspace, top, home: os.homedir() });
}
