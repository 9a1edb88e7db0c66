/**
 * Which git subcommands write a repository's git folder — its refs, index, objects, config or
 * reflogs — as git 2.x's documentation says, for `gitWriteOf` (command-policy.ts). Pure data and
 * one question. A subcommand not known here (an alias, a plugin) counts as no write: the sandbox,
 * where every `.git` is read-only, refuses what it writes, so a miss costs a failed command, never
 * a write; this list is what lets keel ask a person first.
 */

/** git's own options (before the subcommand) that take the next word as their value. */
export const GIT_GLOBAL_VALUE_OPTIONS = [
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--super-prefix",
  "--exec-path",
  "--list-cmds",
];

/** Subcommands that always write (a clone or init makes a repository, whose hooks git runs later). */
const WRITES = new Set([
  ...["add", "am", "checkout", "cherry-pick", "clone", "commit", "fetch", "gc", "init", "merge"],
  ...["mv", "pull", "push", "rebase", "reset", "restore", "revert", "rm", "switch", "update-ref"],
  ...["update-index", "read-tree", "write-tree", "commit-tree", "mktree", "mktag", "merge-tree"],
  ...["unpack-objects", "index-pack", "pack-objects", "pack-refs", "prune", "prune-packed"],
  ...["repack", "fast-import", "filter-branch", "filter-repo", "checkout-index", "mergetool"],
  ...["commit-graph", "multi-pack-index", "maintenance", "for-each-repo", "citool", "gui"],
  ...["svn", "p4", "quiltimport", "merge-index", "http-fetch", "stage", "annex"],
]);

/**
 * Subcommands that read or write by their arguments: each says whether these arguments write.
 * `positional` are the arguments that are not options (after the subcommand).
 */
const BY_ARGUMENTS: Record<string, (args: readonly string[], positional: string[]) => boolean> = {
  // listing: no name, or --list/-l with patterns; a name alone makes a branch or tag
  branch: (a, p) =>
    has(a, "-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-u") ||
    a.some((x) => /^--(set-upstream-to|unset-upstream|edit-description|track|force)/.test(x)) ||
    (p.length > 0 && !has(a, ...LISTING, "-a", "--all", "-r", "--remotes", "-v", "-vv")),
  tag: (a, p) =>
    has(a, "-d", "--delete", "-a", "--annotate", "-s", "--sign", "-f", "--force", "-m", "-F") ||
    (p.length > 0 && !has(a, ...LISTING, "-v", "--verify", "-n")),
  config: (a, p) =>
    !has(a, "--global", "--system") &&
    (a.some((x) =>
      /^--(add|unset|unset-all|replace-all|rename-section|remove-section|edit)$|^-e$/.test(x),
    ) ||
      ["set", "unset", "rename-section", "remove-section", "edit"].includes(p[0] ?? "") ||
      (p.length > 1 && !["get", "list"].includes(p[0]!) && !hasGet(a))),
  stash: (_a, p) => !["list", "show"].includes(p[0] ?? "push"),
  remote: (_a, p) => p.length > 0 && !["show", "get-url"].includes(p[0]!),
  worktree: (_a, p) => p[0] !== "list",
  submodule: (_a, p) => p.length > 0 && !["status", "summary"].includes(p[0]!),
  notes: (_a, p) => p.length > 0 && !["list", "show", "get-ref"].includes(p[0]!),
  reflog: (_a, p) => ["expire", "delete"].includes(p[0] ?? ""),
  "symbolic-ref": (a, p) => p.length > 1 || has(a, "-d", "--delete"),
  "hash-object": (a) => has(a, "-w"),
  apply: (a) => has(a, "--index", "--cached", "-3", "--3way", "--intent-to-add"),
  bisect: (_a, p) => !["log", "view", "visualize"].includes(p[0] ?? "log"),
  lfs: (_a, p) => !["ls-files", "status", "env", "version", "logs"].includes(p[0] ?? "version"),
  "sparse-checkout": (_a, p) => p[0] !== "list",
  replace: (a, p) => p.length > 0 && !has(a, "-l", "--list"),
  rerere: (_a, p) => !["status", "diff", "remaining"].includes(p[0] ?? ""),
  bundle: (_a, p) => p[0] === "unbundle",
  fsck: (a) => has(a, "--lost-found"),
};

/** Options of `git branch` and `git tag` that list (their value, if any, is no name to make). */
const LISTING = [
  ...["-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"],
  ...["--format", "--sort", "--column", "--color"],
];

const has = (args: readonly string[], ...flags: string[]) => args.some((a) => flags.includes(a));
const hasGet = (args: readonly string[]) =>
  args.some((a) =>
    /^--(get|get-all|get-regexp|get-urlmatch|get-color|get-colorbool|list)$|^-l$/.test(a),
  );

/** Whether `git <subcommand> <args>` writes a repository's git folder. */
export function gitSubcommandWrites(subcommand: string, args: readonly string[]): boolean {
  if (WRITES.has(subcommand)) return true;
  const rule = BY_ARGUMENTS[subcommand];
  if (rule === undefined) return false;
  const positional = args.filter((a) => !a.startsWith("-"));
  return rule(args, positional);
}
