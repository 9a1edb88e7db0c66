/**
 * The look over a workspace around a sandboxed command (aftercare.ts cleans by it): protected paths
 * deeper than its top level, those the person's git config names (git-named.ts) and its yarn
 * configs name (yarn-named.ts; the sandbox holds those too, `nestedDenies`), a Jujutsu `.jj/repo`
 * that is a file, entries no program should meet (FIFOs, devices, names that are not UTF-8), and
 * git repositories (a `.git` folder, a bare repository, the target of a `.git` file or link, the
 * folder a `commondir` names, one a link leads to in `node_modules`: git-dir.ts reads where git
 * goes) — each held read-only while a command runs, and one a command made cleaned after it — and
 * the text of the files that take protected settings (protected-settings.ts).
 */
import { readdirSync, realpathSync, type Dirent } from "node:fs";
import path from "node:path";
import { gitNamedPaths, newLook } from "./git-named.js";
import { namedIn, personalDeep, special, type NamedPath } from "./look-named.js";
import { takesSettings } from "./protected-settings.js";
import { namedByYarnrc, YARNRCS } from "./yarn-named.js";
import { commonDirOf, gitFileTarget, inWorkspace, isGitDir, resolves } from "./git-dir.js";
import { lstatOf, readSmall } from "../files/door.js";
import { foldName, sameName } from "./names.js";
import { COMMAND_PROTECTED, removedWhenMade, type ProtectedPath } from "./protected.js";

/**
 * How many entries the look reads at most (at any depth). A workspace with more is reported, not
 * passed over in silence: a command could make many files to hide one behind them.
 */
export const MAX_ENTRIES = 1_000_000;
/** Folders never looked into (they hold other people's code, and a lot of it). */
const SKIP = new Set(["node_modules"]);
/** What the look found: protected paths below the top level, the repositories, and more. */
export interface WorkspaceMarks {
  nested: string[];
  /**
   * The paths the person's git config names (git-named.ts) for the workspace and each repository
   * in it, and those its yarn configs name (yarn-named.ts): whether each was there, and the links
   * on the way to it (workspace-relative, with what each led to) that were.
   */
  named: NamedPath[];
  /**
   * Entries no program should meet where git or a person looks (workspace-relative as bytes' hex:
   * their names need not be UTF-8): a FIFO, socket or device (opening one blocks: a `.git` or a
   * config that is one hangs git, and keel's own look), a `.git` link that leads nowhere, and a
   * name that is not UTF-8 (the look cannot name, and so cannot look into, what is under it).
   * One a command made is removed.
   */
  odd: Map<string, Buffer>;
  /** The look stopped at `MAX_ENTRIES`: what lies past it was not seen. */
  incomplete?: true;
  /**
   * When this look began (ms since the epoch): an entry whose ctime is later was made or changed
   * during or after it.
   */
  at: number;
  /**
   * Bytecode made or changed since the moment `markWorkspace` was asked about (`bytecodeSince`):
   * Python runs a `.pyc` in place of its source when its header names the source's mtime and
   * size, so one a command writes runs code no review of the source shows. Installed packages'
   * (`site-packages`, `dist-packages`) are left, as `node_modules` is.
   */
  bytecode: string[];
  /**
   * Each file whose name takes protected settings (protected-settings.ts: `package.json`,
   * `pyproject.toml`…): its text (undefined when too large to read) and whether it is a link. A
   * command that adds a setting, or makes one a link (a write to the name it leads to would change
   * it unseen), has the file put back (aftercare).
   */
  settings: Map<string, { text: string | undefined; link: boolean }>;
  /** git did not answer in time for every repository: what their config names is not all known. */
  namedIncomplete?: true;
  /**
   * The names the person's own config gives in every repository (git-named.ts `personalNames`:
   * `.githooks` of a global `core.hooksPath`), matched at any depth like the list's: what a command
   * makes under one is removed, one there is held.
   */
  deep: string[];
  /**
   * When this process first looked at the workspace (ms since the epoch): a repository made since
   * is the agent's, one older the person's.
   */
  since: number;
  /**
   * Every repository's git folder, workspace-relative (`.git`, `vendor/lib/.git`, a bare one, where
   * a `.git` file or a `commondir` sends git): the sandbox holds each read-only, and aftercare
   * cleans one the look before did not find.
   */
  repos: Set<string>;
}

/**
 * Looks the workspace over (see the module's comment), up to `limit` entries; `named`: also asks
 * git what the person's config names (the look after a command need not: its clean-up goes by the
 * look before, and a FIFO the command left where an include points would make git wait). Never
 * throws.
 */
export function markWorkspace(
  workspace: string,
  limit = MAX_ENTRIES,
  named = true,
  deep: readonly string[] = [],
  bytecodeSince?: number,
): WorkspaceMarks {
  const marks: WorkspaceMarks = {
    nested: [],
    named: [],
    odd: new Map(),
    repos: new Set(),
    deep: [],
    at: Date.now(),
    bytecode: [],
    settings: new Map(),
    since: firstLook.get(workspace) ?? firstLook.set(workspace, nowExact()).get(workspace)!,
  };
  const look = newLook();
  // the workspace's own config first: the person's names at any depth are known before the walk
  const top = named ? gitNamedPaths(workspace, workspace, undefined, look) : [];
  marks.deep = named ? personalDeep(workspace, look) : [...deep];
  const walk: Walk = {
    workspace,
    marks,
    named,
    bytecodeSince,
    isDeep: deepMatcher(marks.deep),
    budget: limit,
    worktrees: new Set(),
    yarnNamed: [],
  };
  walkFolder(walk, "");
  if (named)
    marks.named = namedIn(workspace, walk.worktrees, marks.repos, marks, look, [
      ...top,
      ...walk.yarnNamed,
    ]);
  return marks;
}

/** One look's walk over the workspace: what it was asked, what it found, and what it may still read. */
interface Walk {
  workspace: string;
  marks: WorkspaceMarks;
  /** Whether the look reads the yarn configs it meets (`markWorkspace`'s `named`). */
  named: boolean;
  bytecodeSince: number | undefined;
  /** Whether a workspace-relative path ends in one of the person's names at any depth. */
  isDeep: (rel: string) => boolean;
  /** How many more entries the walk may read. */
  budget: number;
  /** Folders holding a `.git` (folder, file or link): each is a worktree whose git config applies. */
  worktrees: Set<string>;
  /** What the yarn configs found name (yarn-named.ts): named as git config's names are. */
  yarnNamed: ProtectedPath[];
}

/** Whether a workspace-relative path ends in one of `deep` (any spelling the file system folds). */
function deepMatcher(deep: readonly string[]): (rel: string) => boolean {
  const deepNames = deep.map((n) => n.split("/"));
  return (rel: string) => {
    const parts = rel.split("/");
    return deepNames.some(
      (want) =>
        want.length <= parts.length &&
        want.every((w, k) => sameName(parts[parts.length - want.length + k]!, w)),
    );
  };
}

/** Records a repository's git folder, and the folder its `commondir` names. */
function addRepoWithCommon(walk: Walk, rel: string): void {
  walk.marks.repos.add(rel);
  // git reads the config and runs the hooks of the folder `commondir` names
  const common = commonDirOf(walk.workspace, rel);
  if (common !== undefined) walk.marks.repos.add(common);
}

/** Reads a folder's entries into the marks, and the folders among them, until the budget is spent. */
function walkFolder(walk: Walk, rel: string): void {
  let entries;
  try {
    entries = readdirSync(path.join(walk.workspace, rel), {
      withFileTypes: true,
      encoding: "buffer",
    });
  } catch {
    return;
  }
  const names = new Set(entries.map((e) => e.name.toString("utf8")));
  if (isGitDir(names)) addRepoWithCommon(walk, rel || ".");
  for (const raw of entries) {
    if (--walk.budget < 0) {
      walk.marks.incomplete = true;
      return;
    }
    markEntry(walk, rel, raw);
  }
}

/** Records what one entry of the folder `rel` is (see `WorkspaceMarks`), and walks into a folder. */
function markEntry(walk: Walk, rel: string, raw: Dirent<Buffer>): void {
  const { workspace, marks } = walk;
  const name = raw.name.toString("utf8");
  const bytes = Buffer.concat([Buffer.from(rel ? `${rel}/` : ""), raw.name]);
  if (!Buffer.from(name).equals(raw.name) || special(raw)) {
    marks.odd.set(bytes.toString("hex"), bytes);
    return;
  }
  const child = rel ? `${rel}/${name}` : name;
  const [link, folder, git] = [
    raw.isSymbolicLink(),
    raw.isDirectory(),
    name.toLowerCase() === ".git",
  ];
  if (git && link && !resolves(path.join(workspace, child)))
    marks.odd.set(bytes.toString("hex"), bytes);
  const folded = foldName(name);
  if (removedWhenMade(child, folded) || jjRedirect(rel, name, folder) || walk.isDeep(child))
    marks.nested.push(child);
  if (git) walk.worktrees.add(rel || ".");
  // a `.git` file or link sends git to a repository anywhere (`node_modules` too)
  if (git && !folder) {
    const target = gitFileTarget(workspace, child, link);
    if (target !== undefined) addRepoWithCommon(walk, target);
  }
  if (
    walk.bytecodeSince !== undefined &&
    !folder &&
    BYTECODE.test(name) &&
    !installed(rel) &&
    madeSince(path.join(workspace, child), walk.bytecodeSince)
  )
    marks.bytecode.push(child);
  if (walk.named && !folder && (YARNRCS as readonly string[]).includes(name)) {
    const text = readSmall(path.join(workspace, child));
    if (text !== undefined) walk.yarnNamed.push(...namedByYarnrc(workspace, child, text));
  }
  if (!folder && takesSettings(folded))
    marks.settings.set(child, { text: readSmall(path.join(workspace, child)), link });
  if (folder && !SKIP.has(name)) walkFolder(walk, child);
  // a link to a folder with a `.git` (in `node_modules`, which is not walked): a person who
  // enters the link runs git there
  if (link && !git) linkedRepo(walk, path.join(workspace, child));
}

/** A link to a folder with a `.git`: that folder is a worktree, and its repository is recorded. */
function linkedRepo(walk: Walk, abs: string): void {
  const { workspace } = walk;
  const real = resolves(abs) ? realpathSync(abs) : undefined;
  const rel = real === undefined ? undefined : inWorkspace(workspace, real);
  if (rel === undefined || !lstatOf(real!)?.isDirectory()) return;
  const dotGit = lstatOf(path.join(real!, ".git"));
  if (!dotGit) return;
  walk.worktrees.add(rel);
  if (dotGit.isDirectory()) addRepoWithCommon(walk, rel === "." ? ".git" : `${rel}/.git`);
  else {
    const target = gitFileTarget(
      workspace,
      rel === "." ? ".git" : `${rel}/.git`,
      dotGit.isSymbolicLink(),
    );
    if (target !== undefined) addRepoWithCommon(walk, target);
  }
}

/**
 * A Jujutsu workspace's `.jj/repo` that is a file (or a link), not a folder: jj reads the config of
 * the repository it names, anywhere. jj writes the folder form in every command, so only this form
 * is held (and removed when a command makes it).
 */
const jjRedirect = (rel: string, name: string, folder: boolean) =>
  name === "repo" && !folder && path.basename(rel).toLowerCase() === ".jj";

/**
 * What the sandbox holds read-only besides the top-level list, workspace-relative: every
 * repository's git folder whole (one inside another's is held with it) — or, for a command a person
 * approved to write git (`gitWritable`) and for the workspace itself taken for a bare repository,
 * what the list protects in each (hooks, configs, `lazygit.yml`…) — then the protected paths found deeper (a `.git` among them: a nested
 * repository's, or the `.git` file that names one; not held for such a command), then those the
 * person's git config names.
 */
export function nestedDenies(
  marks: WorkspaceMarks,
  workspace: string,
  gitWritable = false,
): string[] {
  const out = new Set<string>();
  // past the cap, the clean-up after the command is what holds
  const hold = (p: string) => out.size < MAX_HELD && out.add(p);
  const repos = [...marks.repos].sort((a, b) => a.length - b.length);
  for (const rel of repos) {
    // the workspace itself taken for a bare repository: its parts only, or nothing could be written
    if (!gitWritable && rel !== ".") {
      if (![...out].some((held) => rel.startsWith(`${held}/`))) hold(rel);
      continue;
    }
    for (const part of GIT_DIR_PARTS) {
      const p = rel === "." ? part : `${rel}/${part}`;
      if (lstatOf(path.join(workspace, p))) hold(p);
    }
  }
  for (const p of marks.nested) if (!gitWritable || !isDotGit(p)) hold(p);
  for (const n of marks.named) if (n.there) hold(n.path);
  return [...out];
}

/** Whether a workspace-relative path is a `.git` (any spelling a folding file system takes for it). */
export const isDotGit = (rel: string) => sameName(rel.slice(rel.lastIndexOf("/") + 1), ".git");

/** The parts of every repository's git folder the list protects in `.git` (hooks, config…). */
const GIT_DIR_PARTS = COMMAND_PROTECTED.filter((p) => p.startsWith(".git/")).map((p) => p.slice(5));

/**
 * How many paths the sandbox holds read-only at most: sandbox-runtime mounts each and its folder,
 * a few bubblewrap arguments apiece, and bubblewrap takes 9,000 (a command that made hundreds of
 * repositories made every later one fail at about 1,400). Past it, repositories' hooks and configs
 * are cleaned after the command instead (their prints).
 */
const MAX_HELD = 500;

/** Per workspace, when this process first looked at it (`WorkspaceMarks.since`). */
const firstLook = new Map<string, number>();

/**
 * The millisecond after now: a ctime has a fraction of one, and `Date.now()`'s whole milliseconds
 * took a folder made in the same millisecond before the look for one made after it (a command runs
 * many milliseconds after the look).
 */
const nowExact = () => Date.now() + 1;

/** Python's bytecode files. */
const BYTECODE = /\.py[co]$/i;
/** Whether a workspace-relative folder holds installed packages (pip's, the system's). */
const installed = (rel: string) =>
  rel.split("/").some((part) => part === "site-packages" || part === "dist-packages");

/** Whether a workspace-relative path lies in a folder the look does not walk (`SKIP`). */
export const unwalked = (rel: string) => rel.split("/").some((part) => SKIP.has(part));

/** Whether an entry was made (or changed) since `at`: its ctime, which no command can set back. */
export const madeSince = (p: string, at: number) => (lstatOf(p)?.ctimeMs ?? Infinity) >= at;
