/**
 * The one list of workspace paths that make a program outside the sandbox run code later — git, a
 * shell, an editor, direnv, npm, an MCP client, keel itself — and the pure questions asked of it.
 * Anchor: `@anthropic-ai/sandbox-runtime`'s own dangerous files and folders (every one is here; a
 * unit test reads its list), plus what else runs code when a program merely opens the folder.
 *
 * Enforced for commands by the sandbox (read-only where they exist, unmakeable where they do not,
 * see `sandboxDenyPaths`) and, for nested copies a command makes, by aftercare; for the file tools
 * by the gate: a write there needs a person who saw what is written (`--yes` does not approve it,
 * runs without a person refuse it), and keel's own folder is refused to every tool.
 *
 * Not on the list, on purpose: files that run only when a person runs the project itself
 * (`package.json` scripts, `Makefile`, `setup.py`, a virtualenv's `.pth` files, `.pnpmfile.cjs`,
 * CI workflows). The agent writes the project's code; running it is the person's act. The list is for
 * code that runs without anyone choosing to run the project.
 */
import path from "node:path";

export interface ProtectedPath {
  /** Workspace-relative, `/`-separated; matched at any depth for the file tools. */
  path: string;
  /** What runs it, in a few words (docs and the person's question). */
  why: string;
  /** Commands may write it (git itself must write `.git`); its listed parts stay protected. */
  commandsMayWrite?: true;
}

/** keel's own folder: settings, checkpoints, the undo journal and its shadow repository. */
export const KEEL_DIR = ".keel";

export const PROTECTED_PATHS: readonly ProtectedPath[] = [
  { path: KEEL_DIR, why: "keel's own settings, checkpoints and undo records" },
  { path: ".git", why: "git's repository (a `.git` file redirects git)", commandsMayWrite: true },
  { path: ".git/hooks", why: "git runs hooks in your next git command" },
  { path: ".git/config", why: "git config can name programs git runs (fsmonitor, aliases…)" },
  { path: ".git/info/attributes", why: "git attributes pick filters and diff drivers" },
  { path: ".gitattributes", why: "git attributes pick filters and diff drivers" },
  { path: ".gitmodules", why: "git submodule commands follow it" },
  { path: ".gitconfig", why: "git config (read when the workspace is a home folder)" },
  { path: ".husky", why: "a common git hooks folder (core.hooksPath)" },
  { path: ".bashrc", why: "shell start-up file" },
  { path: ".bash_profile", why: "shell start-up file" },
  { path: ".bash_login", why: "shell start-up file" },
  { path: ".profile", why: "shell start-up file" },
  { path: ".zshrc", why: "shell start-up file" },
  { path: ".zshenv", why: "shell start-up file" },
  { path: ".zprofile", why: "shell start-up file" },
  { path: ".zlogin", why: "shell start-up file" },
  { path: ".envrc", why: "direnv runs it when a shell enters the folder" },
  { path: ".ripgreprc", why: "ripgrep's configuration" },
  { path: ".npmrc", why: "npm configuration (node-options, script-shell…)" },
  { path: ".yarnrc", why: "yarn configuration" },
  { path: ".yarnrc.yml", why: "yarn configuration (yarnPath runs a program)" },
  { path: ".mcp.json", why: "MCP clients start the servers it names" },
  { path: ".vscode", why: "VS Code tasks and settings run programs" },
  { path: ".idea", why: "JetBrains run configurations and settings" },
  { path: ".devcontainer", why: "initializeCommand runs on the host" },
  { path: ".devcontainer.json", why: "initializeCommand runs on the host" },
  { path: ".claude", why: "Claude Code hooks, commands and agents" },
  { path: ".cursor", why: "Cursor's MCP servers and rules" },
  { path: ".gemini", why: "gemini-cli's settings and MCP servers" },
  { path: ".continue", why: "Continue's configuration and MCP servers" },
  { path: ".zed", why: "Zed tasks and settings" },
  { path: ".dir-locals.el", why: "Emacs directory variables (eval forms)" },
  { path: ".exrc", why: "vi/vim start-up file (exrc)" },
  { path: ".nvimrc", why: "Neovim start-up file (exrc)" },
  { path: ".nvim.lua", why: "Neovim start-up file (exrc)" },
];

const segments = (rel: string) => rel.split("/").filter((s) => s !== "" && s !== ".");

/**
 * The protected entry a workspace-relative path is at or under, at any depth (`sub/.vscode/x` is
 * `.vscode`'s); the most specific one. Undefined for an ordinary path.
 */
export function protectedEntry(rel: string): ProtectedPath | undefined {
  const parts = segments(rel.replace(/\\/g, "/"));
  let best: ProtectedPath | undefined;
  for (const entry of PROTECTED_PATHS) {
    const want = entry.path.split("/");
    for (let i = 0; i + want.length <= parts.length; i++) {
      if (want.every((w, k) => parts[i + k] === w)) {
        if (!best || want.length > best.path.split("/").length) best = entry;
        break;
      }
    }
  }
  return best;
}

/** Whether a workspace-relative path lies in keel's own folder (refused to every tool). */
export const isKeelOwn = (rel: string): boolean => segments(rel)[0] === KEEL_DIR;

/** The entries commands may not write (all but those git itself writes). */
export const COMMAND_PROTECTED = PROTECTED_PATHS.filter((p) => !p.commandsMayWrite).map(
  (p) => p.path,
);

/**
 * What the sandbox denies writing for one command, as absolute paths: every top-level entry that
 * exists; every missing one as `<path>/.keel-protected`, which makes sandbox-runtime hold the name
 * with an empty read-only folder for the command's lifetime (git and npm skip an empty folder; a
 * placeholder file would break `git add -A`); entries inside `.git` only when `.git` is a folder
 * (a placeholder there would break `git init`: a repository a command creates is cleaned after it,
 * see aftercare); and `nested`, the protected paths found deeper in the workspace.
 */
export function sandboxDenyPaths(
  workspace: string,
  exists: (rel: string) => boolean,
  gitIsDir: boolean,
  nested: readonly string[] = [],
): string[] {
  const out: string[] = [];
  for (const rel of COMMAND_PROTECTED) {
    if (rel.startsWith(".git/") && !gitIsDir) continue;
    out.push(path.join(workspace, rel, ...(exists(rel) ? [] : [".keel-protected"])));
  }
  return [...out, ...nested.map((rel) => path.join(workspace, rel))];
}
