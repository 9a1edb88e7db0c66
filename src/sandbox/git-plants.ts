/**
 * What a command left in a repository's history and index that a later git command of the
 * person's would write into the working tree: a protected path (protected.ts) staged or committed
 * with content the working tree does not hold. The sandbox keeps a command from writing `.mcp.json`
 * or `.vscode/tasks.json`, and aftercare removes one it made below the top level — but
 * `git update-index --cacheinfo` stages one without writing it, and a commit keeps one aftercare
 * removed; the person's `git checkout .`, `git reset --hard` or `git stash` then writes it, outside
 * the sandbox. Such a ref is moved back to where it was before the command (one the command made is
 * deleted; the working tree keeps the commits' other changes), a replace ref it made (which swaps
 * what a checkout writes) is deleted, and such an index entry is put back to HEAD's. Content the
 * working tree holds is not a plant: a commit of a file a person approved stays. The same holds for
 * a project file's setting that runs code (protected-settings.ts: a `package.json` whose husky or
 * lint-staged entry aftercare put back in the working tree, but which a commit keeps).
 *
 * The parsing and the comparison are pure; `undoGitPlants` asks git (host-git.ts).
 */
import { readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { blobId, parseLsFiles, parseLsTree, parseRawLog, type Held } from "./git-parse.js";
import { gitStateByGit, PSEUDO_REFS, reflogIds, unchanged, type GitState } from "./git-refs.js";
import { runGit } from "./host-git.js";
import { linksOnTheWay } from "./look.js";
import { protectedEntry } from "./protected.js";
import { protectedSetting, settingRulesOf } from "./protected-settings.js";
import { lstatOf, readSmall } from "./safe-read.js";

/** New commits read at most; past them only what each changed ref's tip holds is checked. */
export const MAX_COMMITS = 5_000;
/** Planted commits whose refs are listed by git (`--contains`); past them each ref is asked. */
const MAX_PLANTED = 50;
/** How long one repository's check may spend in git. */
const GIT_MS = 10_000;
/** Files larger than this are not hashed (a plant's content is small; one this large differs). */
const MAX_HASHED = 64 << 20;

/** Whether the working tree holds what git would write at `abs` for this entry. */
export function inWorkingTree(abs: string, mode: string, id: string): boolean {
  const st = lstatOf(abs);
  if (!st) return false;
  try {
    if (mode === "120000")
      return st.isSymbolicLink() && blobId(Buffer.from(readlinkSync(abs)), id.length) === id;
    if (mode !== "100644" && mode !== "100755") return mode === "160000"; // a submodule writes nothing itself
    return st.isFile() && st.size <= MAX_HASHED && blobId(readFileSync(abs), id.length) === id;
  } catch {
    return false;
  }
}

/** One repository being checked: where it is, its git, and the question of what is a plant. */
interface Repo {
  gitDir: string;
  /** The working tree, absolute; `rel` makes a path in it workspace-relative. */
  cwd: string;
  rel: (p: string) => string;
  /** How the repository is named to the person. */
  shown: string;
  /** Its git's output (undefined: failed or out of time), against the current deadline. */
  git: (args: string[], input?: string) => string | undefined;
  /** Gives git `GIT_MS` from now. */
  renew: () => void;
  /** Why what git holds at a path is a plant, if it is one. */
  plant: (h: Held) => string | undefined;
}

/**
 * Undoes what a command planted in the repository whose git folder is `gitRel` (a working tree's
 * `.git`, or the folder a `.git` file in `worktree` names; a bare one has no working tree to write
 * into), by its state before the command (none: the command made it) and as the look after it saw
 * it. Returns what was done, workspace-relative. Never throws.
 */
export function undoGitPlants(
  workspace: string,
  gitRel: string,
  before: GitState | undefined,
  looked: GitState | undefined,
  worktree?: string,
): string[] {
  if (before && looked && unchanged(before, looked)) return [];
  const parts = gitRel.split("/");
  const tree = parts.at(-1) === ".git" ? parts.slice(0, -1).join("/") : worktree;
  if (tree === undefined) return []; // bare: no working tree to write into
  const r = openRepo(workspace, gitRel, tree === "." ? "" : tree);
  // what git itself reads now: keel's own reading need not understand every ref a command wrote
  const after = gitStateByGit(r.gitDir, r.cwd, GIT_MS);
  if (!after)
    return [
      `(keel could not check what the command committed or staged in ${r.shown}: git did not answer; check its branches and index before you use git there)`,
    ];
  const done = undoRefs(r, before, after);
  if (before?.index === after.index || after.index === "none") return done;
  r.renew();
  return [...done, ...undoIndex(r)];
}

function openRepo(workspace: string, gitRel: string, top: string): Repo {
  const cwd = path.join(workspace, top);
  const gitDir = path.join(workspace, gitRel);
  let deadline = Date.now() + GIT_MS;
  const env = { GIT_DIR: gitDir, GIT_WORK_TREE: cwd, GIT_LITERAL_PATHSPECS: "1" };
  const git = (args: string[], input?: string) =>
    runGit(cwd, ["-c", "core.fsmonitor=false", ...args], deadline - Date.now(), {
      env,
      ...(input !== undefined ? { input } : {}),
    }).stdout;
  const rel = (p: string) => (top ? `${top}/${p}` : p);
  /**
   * A submodule pointed at a commit whose tree holds a plant: `git submodule update` checks it out.
   * Asked of the submodule's own repository (its objects are there), when it is checked out.
   */
  const submodulePlant = (h: Held) => {
    const sub = path.join(cwd, h.path);
    if (!lstatOf(path.join(sub, ".git")) || linksOnTheWay(workspace, rel(h.path)).length > 0)
      return undefined;
    const list = runGit(sub, ["ls-tree", "-r", "-z", "--full-tree", h.id], deadline - Date.now());
    const held = parseLsTree(list.stdout ?? "").find(
      (x) =>
        x.mode !== GITLINK &&
        protectedEntry(rel(`${h.path}/${x.path}`)) !== undefined &&
        !inWorkingTree(path.join(sub, x.path), x.mode, x.id),
    );
    return (
      held &&
      `its submodule ${h.path} at ${short(h.id)} holds ${held.path}, which git submodule update would write`
    );
  };
  /**
   * Not what the working tree holds, and protected, or a project file (`package.json`…) with a
   * setting that runs code the working tree's lacks, or a submodule at such a commit.
   */
  const plant = (h: Held): string | undefined => {
    if (h.mode === GITLINK) return submodulePlant(h);
    const at = rel(h.path);
    const entry = protectedEntry(at);
    if (!entry && settingRulesOf(at).length === 0) return undefined;
    const abs = path.join(cwd, h.path);
    if (linksOnTheWay(workspace, at).length === 0 && inWorkingTree(abs, h.mode, h.id))
      return undefined;
    if (entry) return entry.why;
    const held = git(["cat-file", "blob", h.id]);
    return held === undefined ? undefined : protectedSetting(at, readSmall(abs) ?? "", held)?.why;
  };
  return {
    gitDir,
    cwd,
    rel,
    shown: top || "the workspace's repository",
    git,
    renew: () => void (deadline = Date.now() + GIT_MS),
    plant,
  };
}

/**
 * The refs, pseudo-refs, reflog lines and HEAD the command moved or added that reach a planted
 * commit: moved back, deleted or removed (see the module's comment).
 */
function undoRefs(r: Repo, before: GitState | undefined, after: GitState): string[] {
  const { git, shown } = r;
  const done: string[] = [];
  const refs = [...after.refs].filter(([name, id]) => before?.refs.get(name) !== id);
  /** The refs deleted here (HEAD must not be left on one). */
  const deleted = new Set<string>();
  const moveBack = (name: string, why: string) => {
    const was = before?.refs.get(name);
    if (was === undefined) deleted.add(name);
    const now = after.refs.get(name)!;
    if (PSEUDO_REFS.includes(name)) {
      // a pseudo-ref (`git reset --hard ORIG_HEAD`) is the last operation's: it goes
      rmSync(path.join(r.gitDir, name), { force: true });
      return void done.push(`${name} in ${shown} (set by the command: removed; ${why})`);
    }
    const ok =
      was === undefined
        ? git(["update-ref", "-d", name, now])
        : git(["update-ref", "-m", "keel: moved back", name, was, now]);
    done.push(
      ok === undefined
        ? `(keel could not undo ${name} in ${shown}: ${why}; check it before you use git there)`
        : was === undefined
          ? `${name} in ${shown} (made by the command: deleted; ${why})`
          : `${name} in ${shown} (moved back from ${short(now)} to ${short(was)}; ${why}; the working tree keeps the commits' other changes)`,
    );
  };
  for (const [name] of refs.filter(([n]) => n.startsWith("refs/replace/")))
    moveBack(name, "a replace ref swaps what a later checkout writes");
  const moved = refs.filter(([n]) => !n.startsWith("refs/replace/"));
  const headId = OID.test(after.head) ? after.head : undefined;
  const headMoved = headId !== undefined && before?.head !== after.head;
  // reflog entries it added: `git checkout -` and `git stash pop stash@{1}` check them out
  const resolved = (id: string) =>
    id.startsWith("rev:")
      ? git(["rev-parse", "--verify", "-q", "--end-of-options", `${id.slice(4)}^{commit}`])?.trim()
      : id;
  const added = [...after.reflogs].map(([file, ids]) => {
    const fresh = [...ids].filter((id) => !before?.reflogs.get(file)?.has(id));
    return [file, fresh.map((id) => [id, resolved(id)] as const)] as const;
  });
  const logged = added.flatMap(([, ids]) => ids.flatMap(([, id]) => (id ? [id] : [])));
  if (moved.length === 0 && !headMoved && logged.length === 0) return done;
  const tips = [...moved.map(([, id]) => id), ...(headMoved ? [headId] : []), ...logged];
  const reaches = plantedReach(r, tips, [...(before?.refs.values() ?? [])]);
  for (const [name, id] of moved) {
    const why = reaches(name, id);
    if (why !== undefined) moveBack(name, why);
  }
  for (const [file, ids] of added) {
    // keyed by what the line says (its id, or the name a checkout message gives)
    const bad = new Map(
      ids.map(([said, id]) => [said, id && reaches(undefined, id)] as const).filter(([, w]) => w),
    );
    if (bad.size > 0) done.push(...forgetEntries(r.gitDir, file, bad, shown));
  }
  // HEAD detached at a planted commit, or on a branch that was just deleted: back where it was;
  // in a repository or worktree the command made, onto a branch with no commit (nothing to write)
  const was = before?.head;
  const point = (to: string, why: string, how: string) => {
    const name = to.startsWith("ref: ") ? to.slice(5) : short(to);
    const ok = to.startsWith("ref: ")
      ? git(["symbolic-ref", "HEAD", to.slice(5)])
      : git(["update-ref", "--no-deref", "HEAD", to]);
    done.push(
      ok === undefined
        ? `(keel could not move HEAD in ${shown}: ${why}; check it before you use git there)`
        : `HEAD in ${shown} (moved ${how} ${name}: ${why})`,
    );
  };
  if (headMoved && reaches(undefined, headId) !== undefined)
    point(
      was ?? `ref: ${UNBORN}`,
      "it was at a commit that adds files that run code later",
      was === undefined ? "onto" : "back to",
    );
  else if (
    after.head.startsWith("ref: ") &&
    deleted.has(after.head.slice(5)) &&
    was !== undefined &&
    was !== after.head
  )
    point(was, "its branch was deleted", "back to");
  return done;
}

/**
 * For new tips (`tips`, reachable from none of `old`): the commits that plant (`git log --raw`, up
 * to `MAX_COMMITS`), and a question of a tip — by ref name when it has one — whether it reaches one
 * (or, past `MAX_COMMITS`, whether its tree holds one).
 */
function plantedReach(r: Repo, tips: string[], old: string[]) {
  const { git, plant } = r;
  const not = old.map((o) => `^${o}`);
  const log = git(
    ["log", "--stdin", "--format=%x01%H", "-m", "--root", "--raw", "-z", "--no-abbrev"].concat([
      "--no-renames",
      `--max-count=${MAX_COMMITS}`,
    ]),
    [...tips, ...not].join("\n") + "\n",
  );
  const commits = log === undefined ? 0 : log.split("\x01").length - 1;
  const planted = new Map<string, string>();
  for (const h of parseRawLog(log ?? "")) {
    const why = plant(h);
    if (why !== undefined && !planted.has(h.commit))
      planted.set(h.commit, `it commits ${h.path}: ${why}`);
  }
  const unknown = log === undefined || commits >= MAX_COMMITS;
  // the refs that reach a planted commit, asked once per planted commit (not once per ref: a
  // command can make thousands)
  const containing = new Map<string, string>();
  let contained = !unknown && planted.size <= MAX_PLANTED;
  if (contained)
    for (const [commit, why] of planted) {
      const names = git(["for-each-ref", "--format=%(refname)", "--contains", commit]);
      if (names === undefined) contained = false;
      for (const name of (names ?? "").split("\n").filter(Boolean))
        if (!containing.has(name)) containing.set(name, why);
    }
  return (name: string | undefined, id: string): string | undefined => {
    if (unknown) {
      // past `MAX_COMMITS` (a clone of a long history): what a checkout of the tip writes
      const tree = git(["ls-tree", "-r", "-z", "--full-tree", id]);
      if (tree === undefined) return "its new commits could not be checked";
      const held = parseLsTree(tree).find((h) => plant(h) !== undefined);
      return held && `it holds ${held.path}: ${plant(held)}`;
    }
    if (planted.size === 0) return undefined;
    if (planted.has(id)) return planted.get(id);
    if (contained && name?.startsWith("refs/")) return containing.get(name);
    const list = git(
      ["rev-list", "--stdin", `--max-count=${MAX_COMMITS}`],
      [id, ...not].join("\n") + "\n",
    );
    const hit = (list ?? "").split("\n").find((c) => planted.has(c));
    return list === undefined ? "its new commits could not be checked" : hit && planted.get(hit);
  };
}

/**
 * Index entries that plant and are not HEAD's (a person's own sparse or staged entry is HEAD's; a
 * command's changes the index): put back to HEAD's, or taken out.
 */
function undoIndex(r: Repo): string[] {
  const { git, rel, shown } = r;
  const listed = git(["ls-files", "-s", "-z"]);
  if (listed === undefined)
    return [
      `(keel could not check what the command staged in ${shown}: git did not answer; run git status there and unstage what you did not mean)`,
    ];
  // only entries that could be plants and differ from HEAD's are looked at further (a submodule
  // or a package.json costs a git call each)
  const maybe = parseLsFiles(listed).filter(
    (h) =>
      h.mode === GITLINK ||
      protectedEntry(rel(h.path)) !== undefined ||
      settingRulesOf(rel(h.path)).length > 0,
  );
  if (maybe.length === 0) return [];
  const paths = [...new Set(maybe.map((h) => h.path))];
  const headTree = git(
    paths.length > MAX_PATHS
      ? ["ls-tree", "-r", "-z", "--full-tree", "HEAD"]
      : ["ls-tree", "-z", "HEAD", "--", ...paths],
  );
  const inHead = new Map(parseLsTree(headTree ?? "").map((h) => [h.path, h]));
  const odd = maybe.filter(
    (h) => (inHead.get(h.path)?.id !== h.id || inHead.get(h.path)?.mode !== h.mode) && r.plant(h),
  );
  const bad = [...new Set(odd.map((h) => h.path))];
  if (bad.length === 0) return [];
  const zero = "0".repeat(odd[0]!.id.length);
  const info = bad.map((p) => {
    const h = inHead.get(p);
    return h ? `${h.mode} ${h.id}\t${p}` : `0 ${zero}\t${p}`;
  });
  const ok = git(["update-index", "--index-info"], `${info.join("\n")}\n`);
  const kept = bad.filter((p) => inHead.has(p));
  if (ok !== undefined && kept.length > 0)
    git(["update-index", "--no-skip-worktree", "--no-assume-unchanged", "--", ...kept]);
  return bad.map((p) =>
    ok === undefined
      ? `(keel could not unstage ${rel(p)}: a later checkout would write it; run git reset -- ${p} there)`
      : `${rel(p)} (staged by the command with content the working tree does not hold, which a later checkout or reset would write: ${inHead.has(p) ? "put back to HEAD's" : "taken out of the index"})`,
  );
}

const short = (id: string) => id.slice(0, 12);
const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
/** Paths given to one `git ls-tree`; past them HEAD's whole tree is listed. */
const MAX_PATHS = 200;
/** A tree entry's mode for a submodule's commit. */
const GITLINK = "160000";
/** The branch, with no commit, HEAD is put on in a repository or worktree a command made at a plant. */
const UNBORN = "refs/heads/keel-removed-plant";

/**
 * Removes a reflog's lines whose commit is in `bad` (a link in place of the reflog goes whole: keel
 * does not write through links). Says what it did (nothing for a reflog gone with its ref).
 */
function forgetEntries(
  gitDir: string,
  file: string,
  bad: ReadonlyMap<string, string | undefined>,
  shown: string,
): string[] {
  const abs = path.join(gitDir, file);
  const why = [...bad.values()][0];
  if (!lstatOf(abs)) return []; // gone with its ref
  try {
    const text = lstatOf(abs)?.isFile() ? readSmall(abs) : undefined;
    if (text === undefined) rmSync(abs, { force: true });
    else
      writeFileSync(
        abs,
        text
          .split("\n")
          .filter((line) => ![...reflogIds(line)].some((said) => bad.has(said)))
          .join("\n"),
      );
    return [
      `${bad.size} entr${bad.size === 1 ? "y" : "ies"} of ${file} in ${shown} (added by the command: removed; ${why}; git checkout - or git stash pop would write it)`,
    ];
  } catch (e) {
    return [`(keel could not clean ${file} in ${shown}: ${(e as Error).message}; ${why})`];
  }
}
