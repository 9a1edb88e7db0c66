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
import { readdirSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { gitNamedPaths, newLook, personalConfig, personalNames, type Look } from "./git-named.js";
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
  named: Array<{
    path: string;
    there: boolean;
    links: Array<{ path: string; to?: string }>;
    /** What it led to when it was itself a link (the person's): kept as it was. */
    linkTo?: string;
  }>;
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
    since: firstLook.get(workspace) ?? firstLook.set(workspace, Date.now()).get(workspace)!,
  };
  const addRepoWithCommon = (rel: string) => {
    marks.repos.add(rel);
    // git reads the config and runs the hooks of the folder `commondir` names
    const common = commonDirOf(workspace, rel);
    if (common !== undefined) marks.repos.add(common);
  };
  const look = newLook();
  // the workspace's own config first: the person's names at any depth are known before the walk
  const top = named ? gitNamedPaths(workspace, workspace, undefined, look) : [];
  marks.deep = named ? personalDeep(workspace, look) : [...deep];
  const deepNames = marks.deep.map((n) => n.split("/"));
  const isDeep = (rel: string) => {
    const parts = rel.split("/");
    return deepNames.some(
      (want) =>
        want.length <= parts.length &&
        want.every((w, k) => sameName(parts[parts.length - want.length + k]!, w)),
    );
  };
  let budget = limit;
  /** Folders holding a `.git` (folder, file or link): each is a worktree whose git config applies. */
  const worktrees = new Set<string>();
  /** What the yarn configs found name (yarn-named.ts): named as git config's names are. */
  const yarnNamed: ProtectedPath[] = [];
  const walk = (rel: string) => {
    let entries;
    try {
      entries = readdirSync(path.join(workspace, rel), { withFileTypes: true, encoding: "buffer" });
    } catch {
      return;
    }
    const names = new Set(entries.map((e) => e.name.toString("utf8")));
    if (isGitDir(names)) addRepoWithCommon(rel || ".");
    for (const raw of entries) {
      if (--budget < 0) {
        marks.incomplete = true;
        return;
      }
      const name = raw.name.toString("utf8");
      const bytes = Buffer.concat([Buffer.from(rel ? `${rel}/` : ""), raw.name]);
      if (!Buffer.from(name).equals(raw.name) || special(raw)) {
        marks.odd.set(bytes.toString("hex"), bytes);
        continue;
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
      if (removedWhenMade(child, folded) || jjRedirect(rel, name, folder) || isDeep(child))
        marks.nested.push(child);
      if (git) worktrees.add(rel || ".");
      // a `.git` file or link sends git to a repository anywhere (`node_modules` too)
      if (git && !folder) {
        const target = gitFileTarget(workspace, child, link);
        if (target !== undefined) addRepoWithCommon(target);
      }
      if (
        bytecodeSince !== undefined &&
        !folder &&
        BYTECODE.test(name) &&
        !installed(rel) &&
        madeSince(path.join(workspace, child), bytecodeSince)
      )
        marks.bytecode.push(child);
      if (named && !folder && (YARNRCS as readonly string[]).includes(name)) {
        const text = readSmall(path.join(workspace, child));
        if (text !== undefined) yarnNamed.push(...namedByYarnrc(workspace, child, text));
      }
      if (!folder && takesSettings(folded))
        marks.settings.set(child, { text: readSmall(path.join(workspace, child)), link });
      if (folder && !SKIP.has(name)) walk(child);
      // a link to a folder with a `.git` (in `node_modules`, which is not walked): a person who
      // enters the link runs git there
      if (link && !git) linkedRepo(path.join(workspace, child));
    }
  };
  const linkedRepo = (abs: string) => {
    const real = resolves(abs) ? realpathSync(abs) : undefined;
    const rel = real === undefined ? undefined : inWorkspace(workspace, real);
    if (rel === undefined || !lstatOf(real!)?.isDirectory()) return;
    const dotGit = lstatOf(path.join(real!, ".git"));
    if (!dotGit) return;
    worktrees.add(rel);
    if (dotGit.isDirectory()) addRepoWithCommon(rel === "." ? ".git" : `${rel}/.git`);
    else {
      const target = gitFileTarget(
        workspace,
        rel === "." ? ".git" : `${rel}/.git`,
        dotGit.isSymbolicLink(),
      );
      if (target !== undefined) addRepoWithCommon(target);
    }
  };
  walk("");
  if (named)
    marks.named = namedIn(workspace, worktrees, marks.repos, marks, look, [...top, ...yarnNamed]);
  return marks;
}

/**
 * The paths git config names for the workspace, each worktree in it (a folder holding a `.git`)
 * and each bare repository, and `atWorkspace` (the workspace's own and its yarn configs'), each
 * with whether it is there, the links on the way to it, and where it led if it was a link. An
 * include file is read once for them all.
 */
function namedIn(
  workspace: string,
  worktrees: Iterable<string>,
  repos: Iterable<string>,
  marks: WorkspaceMarks,
  look: Look,
  atWorkspace: readonly ProtectedPath[],
): WorkspaceMarks["named"] {
  const tops = new Map<string, string>();
  for (const rel of worktrees) {
    const dir = path.join(workspace, rel);
    tops.set(dir, dir);
  }
  for (const rel of repos)
    if (!rel.split("/").some((part) => part.toLowerCase() === ".git")) {
      const dir = path.join(workspace, rel); // a bare repository: hooks run in it
      tops.set(dir, dir);
    }
  tops.delete(workspace); // asked first (`markWorkspace`)
  for (const dir of tops.keys()) if (!askable(dir)) tops.delete(dir);
  const named = new Set(atWorkspace.map((n) => n.path));
  for (const [dir, top] of tops)
    for (const n of gitNamedPaths(workspace, dir, top, look)) named.add(n.path);
  // out of time, the last complete look's names still hold (a command cannot unname them so)
  if (look.slow) {
    marks.namedIncomplete = true;
    for (const rel of lastComplete.get(workspace) ?? []) named.add(rel);
  } else lastComplete.set(workspace, named);
  return [...named].map((rel) => {
    const st = lstatOf(path.join(workspace, rel));
    return {
      path: rel,
      there: st !== undefined,
      links: linksOnTheWay(workspace, rel).map((l) => ({
        path: l,
        to: readLink(path.join(workspace, l)),
      })),
      ...(st?.isSymbolicLink() ? { linkTo: readLink(path.join(workspace, rel)) } : {}),
    };
  });
}

/** Per workspace, the person's names at any depth of the last look git answered (`personalDeep`). */
const lastDeep = new Map<string, string[]>();

/** The person's names at any depth (git-named.ts `personalNames`), the last ones when git fails. */
function personalDeep(workspace: string, look: Look): string[] {
  const personal = personalConfig(look);
  if (personal === undefined) return lastDeep.get(workspace) ?? [];
  const names = personalNames(personal).map((n) => n.path);
  lastDeep.set(workspace, names);
  return names;
}

/** Per workspace, the names of the last look git answered in full (`namedIn`). */
const lastComplete = new Map<string, Set<string>>();

/**
 * Whether git may be asked in a folder without waiting, and is worth asking: no FIFO or device
 * where git opens its `.git`, config or `commondir` (one a command made is removed as odd; a link
 * that leads nowhere fails at once and is no reason to skip), and a `.git` that is a repository
 * (an empty file, a folder without HEAD costs git's time only: a command can make thousands to run
 * a look out of time).
 */
function askable(dir: string): boolean {
  const waits = (p: string): boolean => {
    const st = lstatOf(p);
    if (st?.isSymbolicLink()) return resolves(p) && waits(realpathSync(p));
    return st !== undefined && special(st);
  };
  if (
    [".git", ".git/config", ".git/commondir", "config", "commondir"].some((p) =>
      waits(path.join(dir, p)),
    )
  )
    return false;
  const dotGit = path.join(dir, ".git");
  const st = lstatOf(dotGit);
  if (st === undefined) return true;
  if (st.isFile()) return readSmall(dotGit)?.startsWith("gitdir: ") === true;
  return lstatOf(path.join(dotGit, "HEAD")) !== undefined || resolves(path.join(dotGit, "HEAD"));
}

export const readLink = (p: string) => {
  try {
    return readlinkSync(p);
  } catch {
    return undefined;
  }
};

/** The folders on a workspace-relative path (not the path itself) that are links. */
export function linksOnTheWay(workspace: string, rel: string): string[] {
  const parts = rel.split("/");
  const links: string[] = [];
  for (let i = 1; i < parts.length; i++) {
    const folder = parts.slice(0, i).join("/");
    if (lstatOf(path.join(workspace, folder))?.isSymbolicLink()) links.push(folder);
  }
  return links;
}

/**
 * A Jujutsu workspace's `.jj/repo` that is a file (or a link), not a folder: jj reads the config of
 * the repository it names, anywhere. jj writes the folder form in every command, so only this form
 * is held (and removed when a command makes it).
 */
const jjRedirect = (rel: string, name: string, folder: boolean) =>
  name === "repo" && !folder && path.basename(rel).toLowerCase() === ".jj";

/** A FIFO, socket or device: opening one can block (`WorkspaceMarks.odd`). */
const special = (e: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}) => e.isFIFO() || e.isSocket() || e.isCharacterDevice() || e.isBlockDevice();

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

/** Python's bytecode files. */
const BYTECODE = /\.py[co]$/i;
/** Whether a workspace-relative folder holds installed packages (pip's, the system's). */
const installed = (rel: string) =>
  rel.split("/").some((part) => part === "site-packages" || part === "dist-packages");

/** Whether a workspace-relative path lies in a folder the look does not walk (`SKIP`). */
export const unwalked = (rel: string) => rel.split("/").some((part) => SKIP.has(part));

/** Whether an entry was made (or changed) since `at`: its ctime, which no command can set back. */
export const madeSince = (p: string, at: number) => (lstatOf(p)?.ctimeMs ?? Infinity) >= at;
