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
import { foldName, sameName, SHORT_NAME } from "./names.js";

export interface ProtectedPath {
  /** Workspace-relative, `/`-separated; matched at any depth for the file tools. */
  path: string;
  /** What runs it, in a few words (docs and the person's question). */
  why: string;
  /**
   * A missing one is not held by a placeholder folder while a command runs (a name without a
   * leading dot would show in every `ls` and match every `*`); one a command makes is removed after
   * it (aftercare). For files read only when their program starts.
   */
  unheld?: true;
  /**
   * For a name the person's own config gives relative to any repository's top (git-named.ts
   * `personalNames`): matched at any depth, as the list's names are, not from the top only.
   */
  deep?: true;
}

/** Why mise's config files are protected. */
const MISE = "mise runs its hooks and env when a shell enters the folder";

/** Why commitlint's config files are protected. */
const COMMITLINT = "commitlint loads it in your next git commit (the commit-msg hook)";

/** Why lazygit's repository config is protected. */
const LAZYGIT = "lazygit loads it as the repository's config (its pager and custom commands run)";

/** keel's own folder: settings, checkpoints, the undo journal and its shadow repository. */
export const KEEL_DIR = ".keel";

export const PROTECTED_PATHS: readonly ProtectedPath[] = [
  { path: KEEL_DIR, why: "keel's own settings, checkpoints and undo records" },
  {
    path: ".git",
    why: "git's repository: its hooks, config and history (a `.git` file redirects git)",
  },
  { path: ".git/hooks", why: "git runs hooks in your next git command" },
  { path: ".git/config", why: "git config can name programs git runs (fsmonitor, aliases…)" },
  { path: ".git/config.worktree", why: "git config (read with extensions.worktreeConfig)" },
  { path: ".git/info/attributes", why: "git attributes pick filters and diff drivers" },
  { path: ".git/lazygit.yml", why: LAZYGIT },
  { path: ".gitattributes", why: "git attributes pick filters and diff drivers" },
  { path: ".gitmodules", why: "git submodule commands follow it" },
  { path: ".gitconfig", why: "git config (read when the workspace is a home folder)" },
  {
    path: ".config/git",
    why: "git config and attributes (read when the workspace is a home folder or XDG_CONFIG_HOME's parent)",
  },
  { path: ".husky", why: "a common git hooks folder (core.hooksPath)" },
  { path: ".lazygit.yml", why: LAZYGIT },
  { path: ".pre-commit-config.yaml", why: "pre-commit runs its hooks in your next git commit" },
  { path: "lefthook.yml", why: "lefthook runs its commands in your next git commit", unheld: true },
  {
    path: "lefthook.yaml",
    why: "lefthook runs its commands in your next git commit",
    unheld: true,
  },
  {
    path: "lefthook.toml",
    why: "lefthook runs its commands in your next git commit",
    unheld: true,
  },
  {
    path: "lefthook.json",
    why: "lefthook runs its commands in your next git commit",
    unheld: true,
  },
  { path: ".lefthook.yml", why: "lefthook runs its commands in your next git commit" },
  { path: ".lefthook.yaml", why: "lefthook runs its commands in your next git commit" },
  { path: ".lefthook.toml", why: "lefthook runs its commands in your next git commit" },
  { path: ".lefthook.json", why: "lefthook runs its commands in your next git commit" },
  {
    path: "lefthook-local.yml",
    why: "lefthook runs its commands in your next git commit",
    unheld: true,
  },
  { path: ".lefthook-local.yml", why: "lefthook runs its commands in your next git commit" },
  // read at every commit by the hook lint-staged or husky 4 installed
  ...["", ".json", ".yaml", ".yml", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"].map((e) => ({
    path: `.lintstagedrc${e}`,
    why: "lint-staged runs its commands in your next git commit",
  })),
  ...[".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"].map((e) => ({
    path: `lint-staged.config${e}`,
    why: "lint-staged runs its commands in your next git commit",
    unheld: true as const,
  })),
  ...["", ".json", ".yaml", ".yml", ".js", ".cjs"].map((e) => ({
    path: `.huskyrc${e}`,
    why: "husky 4 runs its hooks in your next git commit",
  })),
  ...[".js", ".cjs"].map((e) => ({
    path: `husky.config${e}`,
    why: "husky 4 runs its hooks in your next git commit",
    unheld: true as const,
  })),
  // read at every commit by the commit-msg hook husky or lefthook runs
  ...["", ".json", ".yaml", ".yml", ".js", ".cjs", ".mjs", ".ts", ".cts", ".mts"].map((e) => ({
    path: `.commitlintrc${e}`,
    why: COMMITLINT,
  })),
  ...[".js", ".cjs", ".mjs", ".ts", ".cts", ".mts"].map((e) => ({
    path: `commitlint.config${e}`,
    why: COMMITLINT,
    unheld: true as const,
  })),
  { path: ".trunk/trunk.yaml", why: "trunk runs its actions from the git hooks it installed" },
  { path: ".hg/hgrc", why: "Mercurial runs its hooks and extensions in your next hg command" },
  {
    path: ".hg/hgrc-not-shared",
    why: "Mercurial runs its hooks and extensions in your next hg command (a share-safe repository's own config)",
  },
  {
    path: ".hg/sharedpath",
    why: "Mercurial reads the hooks and extensions of the repository it names (any folder)",
  },
  { path: ".jj/repo/config.toml", why: "Jujutsu config names programs (pager, fix tools)" },
  { path: ".bashrc", why: "shell start-up file" },
  { path: ".bash_profile", why: "shell start-up file" },
  { path: ".bash_login", why: "shell start-up file" },
  { path: ".profile", why: "shell start-up file" },
  { path: ".zshrc", why: "shell start-up file" },
  { path: ".zshenv", why: "shell start-up file" },
  { path: ".zprofile", why: "shell start-up file" },
  { path: ".zlogin", why: "shell start-up file" },
  { path: ".envrc", why: "direnv runs it when a shell enters the folder" },
  {
    path: ".env",
    why: "aider loads it over your environment (AIDER_LINT_CMD, GIT_CONFIG_* run programs), as does direnv's dotenv",
    unheld: true,
  },
  ...[
    "mise.toml",
    ".mise.toml",
    ".mise.local.toml",
    "mise/config.toml",
    "mise/config.local.toml",
    ".config/mise.toml",
    ".config/mise.local.toml",
  ].map((p) => ({ path: p, why: MISE })),
  { path: "mise.local.toml", why: MISE, unheld: true },
  { path: ".mise", why: "mise's config folder (hooks and env when a shell enters)" },
  { path: ".config/mise", why: "mise's config folder (hooks and env when a shell enters)" },
  { path: "mise/conf.d", why: "mise loads every .toml in it (hooks and env when a shell enters)" },
  ...[".rtx.toml", ".rtx.local.toml"].map((p) => ({ path: p, why: `${MISE} (rtx's name)` })),
  // rustup and cargo read these in any cargo or rustc call, which editors make on open
  { path: "rust-toolchain", why: "rustup runs the toolchain it names", unheld: true },
  { path: "rust-toolchain.toml", why: "rustup runs the toolchain it names", unheld: true },
  { path: ".cargo/config.toml", why: "cargo runs the programs it names (rustc-wrapper…)" },
  { path: ".cargo/config", why: "cargo runs the programs it names (rustc-wrapper…)" },
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
  { path: ".dir-locals-2.el", why: "Emacs directory variables (eval forms)" },
  { path: ".exrc", why: "vi/vim start-up file (exrc)" },
  { path: "_exrc", why: "vi/vim start-up file (exrc)", unheld: true },
  { path: ".vimrc", why: "Vim start-up file (exrc)" },
  { path: "_vimrc", why: "Vim start-up file (exrc)", unheld: true },
  { path: ".gvimrc", why: "gVim start-up file (exrc)" },
  { path: "_gvimrc", why: "gVim start-up file (exrc)", unheld: true },
  { path: ".nvimrc", why: "Neovim start-up file (exrc)" },
  { path: ".nvim.lua", why: "Neovim start-up file (exrc)" },
  { path: ".helix", why: "Helix's workspace language servers" },
  // Other coding agents' project config: the MCP servers, hooks and commands they start.
  { path: ".aider.conf.yml", why: "aider runs the lint and test commands it names" },
  { path: "opencode.json", why: "opencode starts the MCP servers it names", unheld: true },
  { path: "opencode.jsonc", why: "opencode starts the MCP servers it names", unheld: true },
  { path: ".opencode", why: "opencode's commands, agents and plugins" },
  { path: "crush.json", why: "Crush starts the MCP and language servers it names", unheld: true },
  { path: ".crush.json", why: "Crush starts the MCP and language servers it names" },
  { path: ".codex", why: "Codex CLI's project config and MCP servers" },
  { path: ".kiro", why: "Kiro's hooks and MCP servers" },
  { path: ".amazonq", why: "Amazon Q's MCP servers and agents" },
  { path: ".roo", why: "Roo Code's MCP servers" },
  { path: ".kilocode", why: "Kilo Code's MCP servers" },
  { path: ".qwen", why: "Qwen Code's settings and MCP servers" },
  { path: ".clinerules", why: "Cline's rules and hooks" },
  { path: ".windsurf", why: "Windsurf's rules, workflows and hooks" },
  { path: ".trae", why: "Trae's rules and MCP servers" },
  { path: ".junie", why: "Junie's guidelines and MCP servers" },
  // Start-up files interpreters and debuggers run from the folder they start in.
  { path: ".Rprofile", why: "R runs it when started in the folder" },
  { path: ".irbrc", why: "irb runs it when started in the folder" },
  { path: ".pryrc", why: "pry runs it when started in the folder" },
  { path: ".pdbrc", why: "pdb runs its commands" },
  { path: ".ghci", why: "GHCi runs it when started in the folder" },
  { path: ".octaverc", why: "Octave runs it when started in the folder" },
  { path: ".gdbinit", why: "gdb runs it where local init files are allowed" },
  { path: ".lldbinit", why: "lldb runs it where local init files are allowed" },
  { path: ".pylintrc", why: "pylint runs its init-hook (editors lint on open)" },
  { path: "pylintrc", why: "pylint runs its init-hook (editors lint on open)", unheld: true },
  { path: ".pylintrc.toml", why: "pylint runs its init-hook (editors lint on open)" },
  {
    path: "pylintrc.toml",
    why: "pylint runs its init-hook (editors lint on open)",
    unheld: true,
  },
];

/**
 * Names protected by their form rather than one spelling, at any depth: matched against a name as
 * `foldName` folds it. Where one exists the sandbox holds it read-only (the look finds it); a
 * missing one is not held (its spellings are endless) and one a command makes is removed after it.
 */
export const PROTECTED_FORMS: ReadonlyArray<{
  form: RegExp;
  /** The folder (folded) the name must be in, where the form is only its tool's there. */
  under?: string;
  why: string;
}> = [
  {
    form: /^\.envrc\.[^/]+$/,
    why: "an .envrc sources it (source_env, source_env_if_exists): direnv's trust does not cover it",
  },
  {
    form: /\.code-workspace$/,
    why: "VS Code offers to open a workspace file it finds: its tasks (runOn folderOpen) and settings run programs",
  },
  {
    form: /^\.?mise\.[^/]+\.toml$/,
    why: `${MISE} (the config of a MISE_ENV)`,
  },
  {
    form: /^config\.[^/]+\.toml$/,
    under: "mise",
    why: `${MISE} (the config of a MISE_ENV)`,
  },
];

/**
 * The form a name (one path segment, folded) has, if it is one of `PROTECTED_FORMS` and not a name
 * the list spells out (`mise.local.toml` is held where missing, as the list's names are); `parent`
 * gives the segment before it (folded), asked only of a name a form that lives in one folder fits.
 */
const formOf = (folded: string, parent: () => string | undefined) =>
  LAST_NAMES.has(folded)
    ? undefined
    : PROTECTED_FORMS.find((f) => f.form.test(folded) && (!f.under || f.under === parent()));

/** The folded segment before the last of a path's segments, if any. */
const parentOf = (parts: readonly string[]) =>
  parts.length > 1 ? foldName(parts.at(-2)!) : undefined;

const segments = (rel: string) => rel.split("/").filter((s) => s !== "" && s !== ".");

/**
 * The protected entry a workspace-relative path is at or under, at any depth (`sub/.vscode/x` is
 * `.vscode`'s); the most specific one. Names are compared as a folding file system would
 * (`sameName`): `.VSCode/tasks.json` is `.vscode`'s. Then `named`, paths this workspace's own
 * config names (git-named.ts), from the workspace's top only. Undefined for an ordinary path.
 */
export function protectedEntry(
  rel: string,
  named: readonly ProtectedPath[] = [],
): ProtectedPath | undefined {
  const parts = segments(rel.replace(/\\/g, "/"));
  const at = (want: string[], i: number) => want.every((w, k) => sameName(parts[i + k]!, w));
  const fromTop = named.find((entry) => {
    const want = segments(entry.path);
    if (!entry.deep) return want.length <= parts.length && at(want, 0);
    for (let i = 0; i + want.length <= parts.length; i++) if (at(want, i)) return true;
    return false;
  });
  if (fromTop) return fromTop;
  let best: ProtectedPath | undefined;
  for (const [i, part] of parts.entries()) {
    const form = formOf(foldName(part), () => parentOf(parts.slice(0, i + 1)));
    if (form) best = { path: part, why: form.why };
  }
  for (const entry of PROTECTED_PATHS) {
    const want = entry.path.split("/");
    for (let i = 0; i + want.length <= parts.length; i++) {
      if (want.every((w, k) => sameName(parts[i + k]!, w))) {
        if (!best || want.length > best.path.split("/").length) best = entry;
        break;
      }
    }
  }
  return best;
}

/** Whether a workspace-relative path lies in keel's own folder (refused to every tool). */
export const isKeelOwn = (rel: string): boolean => {
  const first = segments(rel.replace(/\\/g, "/"))[0];
  return first !== undefined && sameName(first, KEEL_DIR);
};

/**
 * The entries commands may not write: all of the list (`.git` too, but for a git write a person
 * approved: see `sandboxDenyPaths`).
 */
export const COMMAND_PROTECTED = PROTECTED_PATHS.map((p) => p.path);

/** The top-level entries a missing one of which no placeholder holds (`unheld`). */
const UNHELD = new Set(PROTECTED_PATHS.filter((p) => p.unheld).map((p) => p.path));

/** The last names of the entries commands may not write, folded: most names are none of them. */
const LAST_NAMES = new Set(COMMAND_PROTECTED.map((e) => foldName(e.split("/").at(-1)!)));

/**
 * Whether a workspace-relative path is one aftercare removes when a command made it: below the top
 * level, unheld, or of a protected form (`PROTECTED_FORMS`). Asked of every entry of the workspace around every command, so a name that
 * cannot end a protected path is answered from one folding (a workspace of 100,000 entries was
 * 2.5 s a look, comparing each name with each entry); `folded`, the last name's `foldName` if the
 * caller has it.
 */
export const removedWhenMade = (
  rel: string,
  folded = foldName(rel.slice(rel.lastIndexOf("/") + 1)),
): boolean => {
  if (formOf(folded, () => parentOf(segments(rel)))) return true;
  if (!LAST_NAMES.has(folded) && !SHORT_NAME.test(folded)) return false;
  return (
    (rel.includes("/") || [...UNHELD].some((name) => sameName(rel, name))) &&
    isCommandProtected(rel)
  );
};

/**
 * Whether a workspace-relative path IS one a command may not leave (not a path under one), its
 * names compared as `sameName` does: `sub/.vscode`, `.hg/hgrc`, `pkg/.Envrc`, `vendor/x/.git` (a
 * repository: only a command a person approved may make one). Entries inside `.git` are not: the
 * sandbox holds the whole `.git`, and where a person let a command write it, git writes there.
 */
export function isCommandProtected(rel: string): boolean {
  const parts = segments(rel);
  if (parts.length > 0 && formOf(foldName(parts.at(-1)!), () => parentOf(parts))) return true;
  return COMMAND_PROTECTED.some((entry) => {
    if (entry.startsWith(".git/")) return false;
    const want = entry.split("/");
    const from = parts.length - want.length;
    return from >= 0 && want.every((w, k) => sameName(parts[from + k]!, w));
  });
}

/** The file a missing protected path's placeholder is made for (its folder holds the name). */
export const PLACEHOLDER = ".keel-protected";

/**
 * What the sandbox denies writing for one command, as absolute paths: every top-level entry that
 * exists; every missing one as `<path>/.keel-protected`, which makes sandbox-runtime hold the name
 * with an empty read-only folder for the command's lifetime (git and npm skip an empty folder; a
 * placeholder file would break `git add -A`); other entries inside a folder (`.hg/hgrc`) only when
 * they exist (a placeholder would make the folder; one a command creates is removed after it); and
 * `nested`, the protected paths found deeper in the workspace. `.git` is held whole (a missing one
 * too: no command makes a repository there), unless a person approved this command's git write
 * (`gitWritable`): then only the entries the list names inside it are, when `.git` is a folder (a
 * placeholder in a missing one would break `git init`).
 */
export function sandboxDenyPaths(
  workspace: string,
  exists: (rel: string) => boolean,
  gitIsDir: boolean,
  nested: readonly string[] = [],
  gitWritable = false,
): string[] {
  const out: string[] = [];
  for (const rel of COMMAND_PROTECTED) {
    if (rel === ".git" && gitWritable) continue;
    if (rel.startsWith(".git/") && !(gitIsDir && gitWritable)) continue;
    const there = exists(rel);
    if (!there && rel.includes("/") && !rel.startsWith(".git/")) continue;
    if (!there && UNHELD.has(rel)) continue;
    out.push(path.join(workspace, rel, ...(there ? [] : [PLACEHOLDER])));
  }
  return [...new Set([...out, ...nested.map((rel) => path.join(workspace, rel))])];
}
