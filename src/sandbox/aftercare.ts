/**
 * After a sandboxed command, what it made that would run code outside the sandbox later is undone,
 * by the look before it and after it (look.ts): a protected path it created below the top level,
 * or one the person's git config or yarn config names, is removed — a repository it made too (its
 * `.git`, or git's marks of a bare one: `HEAD`, `objects`, `commondir`), unless a person approved
 * the command's git write. The person's repositories need nothing more: their git folders are
 * read-only to commands (`nestedDenies`). Python bytecode it left goes too (Python runs a `.pyc` in
 * place of its source), and a project file it gave a setting that runs code (protected-settings.ts)
 * is put back. Never through a link.
 */
import { chmodSync, lstatSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  isDotGit,
  madeSince,
  markWorkspace,
  MAX_ENTRIES,
  unwalked,
  type WorkspaceMarks,
} from "./look.js";
import { linksOnTheWay, readLink } from "./look-named.js";
import { protectedSetting } from "./protected-settings.js";
import { lstatOf } from "../files/door.js";

/**
 * After a command: removes the protected paths it created below the top level and those the git
 * config names that were not there before it, and every repository it made (unless `gitWritable`:
 * a person approved its git write), and removes the Python bytecode it left outside installed
 * packages. Returns what was removed, workspace-relative (the bytecode is not said). Never throws.
 */
export function cleanAfter(
  workspace: string,
  before: WorkspaceMarks,
  limit = MAX_ENTRIES,
  gitWritable = false,
): string[] {
  const clean = newCleanup(workspace);
  let after: WorkspaceMarks | undefined;
  clean.attempt("the workspace", () => {
    after = markWorkspace(workspace, limit, false, before.deep, before.at);
  });
  if (!after) return clean.removed;
  removeLeftovers(clean, before, after);
  // past the first look's limit, what was there before is not known: nothing there is removed
  if (!before.incomplete) removeNewNested(clean, before, after, gitWritable);
  restoreNamed(clean, before);
  if (!before.incomplete && !gitWritable) removeNewRepos(clean, before, after);
  restoreSettings(clean, before, after);
  if (before.namedIncomplete)
    clean.removed.push(
      "(git did not answer in time for every repository here, so what their config names was not all checked: look at their hooks folders and the scripts their aliases run before you use git there)",
    );
  if (after.incomplete)
    clean.removed.push(
      `(keel checked only the first ${limit.toLocaleString("en")} entries of the workspace: files past them that run code later were not looked for)`,
    );
  return clean.removed;
}

/** One clean-up: its workspace, what it has said so far, and its ways to act there. */
interface Cleanup {
  workspace: string;
  /** What was removed or put back, workspace-relative, and what could not be. */
  removed: string[];
  /** Does one part of the clean-up; one that fails is said, and the rest still runs. */
  attempt: (what: string, act: () => void) => void;
  /** Whether no folder on the way to `rel` is a link: what keel does there stays in the workspace. */
  direct: (rel: string) => boolean;
  /** Removes `rel` (said as `shown`), unless a link is on the way to it. */
  remove: (rel: string, shown?: string) => void;
  /** The person's own link, if a command removed, replaced or turned it: put back as it was. */
  putBack: (rel: string, to: string) => void;
}

function newCleanup(workspace: string): Cleanup {
  const removed: string[] = [];
  const attempt = (what: string, act: () => void) => {
    try {
      act();
    } catch (e) {
      removed.push(
        `(keel could not clean ${what}: ${(e as Error).message}; check it before you use git or open the folder)`,
      );
    }
  };
  const direct = (rel: string) => linksOnTheWay(workspace, rel).length === 0;
  const remove = (rel: string, shown = rel) =>
    void (direct(rel)
      ? attempt(shown, () => {
          removeHard(path.join(workspace, rel));
          removed.push(shown);
        })
      : removed.push(`(keel did not remove ${shown}: ${THROUGH_LINK})`));
  const putBack = (rel: string, to: string) => {
    const at = path.join(workspace, rel);
    const st = lstatOf(at);
    if (st?.isSymbolicLink() && readLink(at) === to) return;
    if (!direct(rel)) return void removed.push(`(keel did not put back ${rel}: ${THROUGH_LINK})`);
    attempt(rel, () => {
      if (st) removeHard(at);
      symlinkSync(to, at);
      removed.push(`${rel} (put back as the link it was)`);
    });
  };
  return { workspace, removed, attempt, direct, remove, putBack };
}

/**
 * Removes the bytecode the command left, silently, and the odd entries it made (a FIFO, device,
 * dangling `.git` link or a name that is not UTF-8).
 */
function removeLeftovers(clean: Cleanup, before: WorkspaceMarks, after: WorkspaceMarks): void {
  const { workspace, attempt } = clean;
  // bytecode it left, silently (a test run leaves some; none of it is kept): what Python runs
  // later is what the source beside it says
  for (const rel of after.bytecode.filter((r) => clean.direct(r)))
    attempt(rel, () => removeHard(path.join(workspace, rel)));
  for (const [hex, bytes] of after.odd)
    if (!before.odd.has(hex))
      attempt(`an entry under ${path.dirname(bytes.toString("utf8"))}`, () => {
        const name = bytes.toString("utf8");
        if (Buffer.from(name).equals(bytes)) removeHard(path.join(workspace, name));
        else
          rmSync(Buffer.concat([Buffer.from(`${workspace}/`), bytes]), {
            recursive: true,
            force: true,
          });
        clean.removed.push(
          `${bytes.toString("utf8")} (a FIFO, device, dangling .git link or a name that is not UTF-8)`,
        );
      });
}

/** Removes the protected paths below the top level the command made (a repository unless approved). */
function removeNewNested(
  clean: Cleanup,
  before: WorkspaceMarks,
  after: WorkspaceMarks,
  gitWritable: boolean,
): void {
  const had = new Set(before.nested);
  for (const rel of after.nested)
    if (!had.has(rel) && ![...had].some((h) => rel.startsWith(`${h}/`)))
      if (!isDotGit(rel)) clean.remove(rel);
      // a repository (or a `.git` file naming one): its history is what the person's next
      // checkout there writes, and only a command a person approved may write git
      else if (!gitWritable) clean.remove(rel, `${rel} (${NEW_REPOSITORY})`);
}

/**
 * The paths the person's config names: a link a command put on the way goes, the person's links
 * are put back, and one the command made there goes.
 */
function restoreNamed(clean: Cleanup, before: WorkspaceMarks): void {
  const { workspace } = clean;
  // first, a link a command put on the way to a named path (it would lead a file tool past the
  // name) goes, the shallowest first: nothing after it acts through it
  for (const { path: rel, links } of before.named)
    for (const link of linksOnTheWay(workspace, rel))
      if (!links.some((k) => k.path === link)) {
        clean.remove(link);
        break;
      }
  for (const { path: rel, there, links, linkTo } of before.named) {
    // the person's first link on the way (deeper ones lie where it leads, not keel's to touch)
    if (links[0]?.to !== undefined) clean.putBack(links[0].path, links[0].to);
    // through the person's links the path is named again where they lead (git-named.ts)
    if (links.length > 0 || !clean.direct(rel)) continue;
    if (linkTo !== undefined) clean.putBack(rel, linkTo);
    else if (!there && lstatOf(path.join(workspace, rel))) clean.remove(rel);
  }
}

/**
 * A folder the command made a repository's, which the walk did not meet as a `.git` (a bare one;
 * one in `node_modules` a link or a `.git` file sends git to): git runs its hooks and obeys its
 * config, so it goes — a `.git` whole, another folder git's marks in it made since keel first
 * looked (git takes it for none then). The person's git folders are read-only to commands.
 */
function removeNewRepos(clean: Cleanup, before: WorkspaceMarks, after: WorkspaceMarks): void {
  const { workspace } = clean;
  for (const rel of after.repos) {
    if (before.repos.has(rel) || !lstatOf(path.join(workspace, rel))) continue;
    // one the look before could not see (in `node_modules`, reached through a link or a `.git`
    // file): only when the command made it, never a checkout of the person's there
    if (unwalked(rel) && !madeSince(path.join(workspace, rel, "HEAD"), before.since)) continue;
    const shown = (p: string) => `${p} (${NEW_REPOSITORY})`;
    if (isDotGit(rel)) clean.remove(rel, shown(rel));
    else
      for (const mark of ["HEAD", "objects", "commondir"])
        if (
          lstatOf(path.join(workspace, rel, mark)) &&
          madeSince(path.join(workspace, rel, mark), before.since)
        )
          clean.remove(path.join(rel, mark), shown(rel === "." ? mark : `${rel}/${mark}`));
  }
}

/**
 * A setting the command added to a project file that makes a tool run code (a git hook's command,
 * a linter's plugin), or such a file it made a link: the file goes back to what it was before the
 * command, or goes if it made it (a link of the person's is theirs).
 */
function restoreSettings(clean: Cleanup, before: WorkspaceMarks, after: WorkspaceMarks): void {
  const { workspace } = clean;
  for (const [rel, { text, link }] of after.settings) {
    const was = before.settings.get(rel);
    if (before.incomplete || was?.link || (was && was.text === undefined)) continue;
    if (!link && was !== undefined && text === was.text) continue; // unchanged
    const why = link
      ? "it is a link now, and a write to the name it leads to would change it unseen"
      : text === undefined
        ? "it is too large to check for settings that run code"
        : protectedSetting(rel, was?.text ?? "", text)?.why;
    if (why === undefined) continue;
    const shown = (done: string) =>
      `${rel} (changed by the command: ${why}; ${done} — make such a change with write_file or edit_file, where a person can approve it)`;
    if (was === undefined) clean.remove(rel, shown("removed"));
    else if (!clean.direct(rel))
      clean.removed.push(`(keel did not put back ${rel}: ${THROUGH_LINK})`);
    else
      clean.attempt(rel, () => {
        removeHard(path.join(workspace, rel));
        writeFileSync(path.join(workspace, rel), was.text!);
        clean.removed.push(shown("put back as it was before the command"));
      });
  }
}

/** Why keel removed a `.git` (or git's marks of a repository) a command made. */
const NEW_REPOSITORY =
  "a repository the command made: git runs its hooks and obeys its config, and only a git command a person approves may make or change one";

/** Why keel left something it would have removed or put back. */
const THROUGH_LINK =
  "a folder on the way to it is a link now, and keel does not act through links; remove that link, then check it";

/**
 * Removes an entry (a link itself, never what it leads to), first making writable what a command
 * made read-only in the way: its folder, and the folders inside it.
 */
function removeHard(abs: string): void {
  try {
    rmSync(abs, { recursive: true, force: true });
    return;
  } catch {
    // a folder on the way or inside was made read-only: open them up and try once more
  }
  const writable = (p: string) => chmodSync(p, lstatSync(p).mode | 0o700);
  writable(path.dirname(abs));
  const open = (p: string) => {
    const st = lstatOf(p);
    if (!st?.isDirectory()) return;
    writable(p);
    for (const name of readdirSync(p)) open(path.join(p, name));
  };
  open(abs);
  rmSync(abs, { recursive: true, force: true });
}
