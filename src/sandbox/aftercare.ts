/**
 * After a sandboxed command, what it made that would run code outside the sandbox later is undone,
 * by the look before it and after it (look.ts): a protected path it created below the top level,
 * or one the person's git config or yarn config names, is removed, and a repository it created or
 * changed loses its new or rewritten hooks, the config keys it added that `SAFE_GIT_CONFIG` does
 * not list (git has many that run a program), a config or hooks folder that is a link (symbolic, or
 * a hard link shared with another name, through which a file tool would write it), a `commondir` it
 * made or changed, and what it added at its git folder's top level that git does not make there
 * or an unfinished rebase's state (`leftInGitDir`); Python bytecode it left goes too (Python runs a `.pyc` in place of its source), and a
 * project file it gave a setting that runs code (protected-settings.ts) is put back. Never
 * through a link.
 */
import { chmodSync, lstatSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gitConfigKeys, withoutUnsafeGitConfig } from "./git-config.js";
import { CONFIGS, leftInGitDir, linksOf } from "./git-dir.js";
import { removeForgedObjects } from "./git-objects.js";
import { undoGitPlants } from "./git-plants.js";
import {
  linksOnTheWay,
  madeSince,
  markWorkspace,
  MAX_ENTRIES,
  readLink,
  unwalked,
  type WorkspaceMarks,
} from "./look.js";
import { protectedSetting } from "./protected-settings.js";
import { lstatOf, readSmall } from "./safe-read.js";

/**
 * After a command: removes the protected paths it created below the top level and those the git
 * config names that were not there before it, and cleans every repository it created or changed
 * (hooks other than git's samples removed, config keys `SAFE_GIT_CONFIG` does not list removed;
 * hooks and key lines it had before stay, a commondir it made or changed in one put back), and
 * removes the Python bytecode it left outside installed packages. Returns what was removed,
 * workspace-relative (the bytecode is not said). Never throws.
 */
export function cleanAfter(
  workspace: string,
  before: WorkspaceMarks,
  limit = MAX_ENTRIES,
): string[] {
  const removed: string[] = [];
  /** Does one part of the clean-up; one that fails is said, and the rest still runs. */
  const attempt = (what: string, act: () => void) => {
    try {
      act();
    } catch (e) {
      removed.push(
        `(keel could not clean ${what}: ${(e as Error).message}; check it before you use git or open the folder)`,
      );
    }
  };
  /** Whether no folder on the way to `rel` is a link: what keel does there stays in the workspace. */
  const direct = (rel: string) => linksOnTheWay(workspace, rel).length === 0;
  const remove = (rel: string, shown = rel) =>
    direct(rel)
      ? attempt(shown, () => {
          removeHard(path.join(workspace, rel));
          removed.push(shown);
        })
      : removed.push(`(keel did not remove ${shown}: ${THROUGH_LINK})`);
  let after: WorkspaceMarks | undefined;
  attempt("the workspace", () => {
    after = markWorkspace(workspace, limit, false, before.deep, before.at);
  });
  if (!after) return removed;
  // bytecode it left, silently (a test run leaves some; none of it is kept): what Python runs
  // later is what the source beside it says
  for (const rel of after.bytecode.filter((r) => direct(r)))
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
        removed.push(
          `${bytes.toString("utf8")} (a FIFO, device, dangling .git link or a name that is not UTF-8)`,
        );
      });
  // past the first look's limit, what was there before is not known: nothing there is removed
  const had = new Set(before.nested);
  if (!before.incomplete)
    for (const rel of after.nested)
      if (!had.has(rel) && ![...had].some((h) => rel.startsWith(`${h}/`))) remove(rel);
  /** The person's own link, if a command removed, replaced or turned it: put back as it was. */
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
  // first, a link a command put on the way to a named path (it would lead a file tool past the
  // name) goes, the shallowest first: nothing after it acts through it
  for (const { path: rel, links } of before.named)
    for (const link of linksOnTheWay(workspace, rel))
      if (!links.some((k) => k.path === link)) {
        remove(link);
        break;
      }
  for (const { path: rel, there, links, linkTo } of before.named) {
    // the person's first link on the way (deeper ones lie where it leads, not keel's to touch)
    if (links[0]?.to !== undefined) putBack(links[0].path, links[0].to);
    // through the person's links the path is named again where they lead (git-named.ts)
    if (links.length > 0 || !direct(rel)) continue;
    if (linkTo !== undefined) putBack(rel, linkTo);
    else if (!there && lstatOf(path.join(workspace, rel))) remove(rel);
  }
  const repos = after.repos;
  for (const [rel, { print, hooks, entries }] of repos) {
    const was = before.repos.get(rel);
    // what it added at the top level that git does not make there, or an unfinished rebase's state
    // (a git folder inside, a commondir's, is cleaned as the repository it is)
    const left = entries.filter(
      (n) =>
        !was?.entries.includes(n) &&
        leftInGitDir(n) !== undefined &&
        !repos.has(rel === "." ? n : `${rel}/${n}`),
    );
    if (was?.print === print && left.length === 0) continue;
    // one the look before could not see (in `node_modules`, reached through a link or a `.git`
    // file): cleaned only when the command made it, never a checkout of the person's there
    if (!was && unwalked(rel) && !madeSince(path.join(workspace, rel, "HEAD"), before.since))
      continue;
    const gitDir = path.join(workspace, rel);
    const at = (p: string) => (rel === "." ? p : `${rel}/${p}`);
    // a link in place of the hooks folder or a config: removed (the link, not what it leads to)
    for (const name of linksOf(gitDir).filter((n) => !was?.links.includes(n)))
      remove(path.join(rel, name), at(name));
    // a commondir it made or changed in a repository that was there sends the person's git to
    // another folder's config, hooks and objects: put back as it was
    if (was && readSmall(path.join(gitDir, "commondir")) !== was.common) {
      const common = path.join(rel, "commondir");
      if (was.common === undefined) remove(common, `${at("commondir")} (made by the command)`);
      else if (!direct(common))
        removed.push(`(keel did not put back ${at("commondir")}: ${THROUGH_LINK})`);
      else
        attempt(at("commondir"), () => {
          removeHard(path.join(workspace, common));
          writeFileSync(path.join(workspace, common), was.common!);
          removed.push(`${at("commondir")} (changed by the command: put back)`);
        });
    }
    for (const name of left) remove(path.join(rel, name), `${at(name)} (${leftInGitDir(name)})`);
    // a hook it made, or rewrote under the same name (one the sandbox did not hold, past its cap)
    for (const name of Object.keys(hooks).filter((n) => was?.hooks[n] !== hooks[n]))
      remove(
        path.join(rel, "hooks", name),
        at(`hooks/${name}`) + (was?.hooks[name] ? " (changed by the command)" : ""),
      );
    CONFIGS.forEach((name, i) => {
      const config = path.join(gitDir, name);
      if (!lstatOf(config)?.isFile()) return;
      attempt(at(name), () => {
        const text = readSmall(config);
        if (text === undefined) {
          // larger than keel reads (or unreadable): it cannot be cleaned, so it goes whole
          removeHard(config);
          removed.push(`${at(name)} (too large to check)`);
          return;
        }
        const kept = gitConfigKeys(was?.configs[i] ?? "");
        const clean = withoutUnsafeGitConfig(text, kept, was !== undefined);
        if (clean.removed.length === 0) return;
        chmodSync(config, lstatSync(config).mode | 0o200); // a command may have made it read-only
        writeFileSync(config, clean.text);
        removed.push(...clean.removed.map((k) => `${k} from ${at(name)}`));
      });
    });
  }
  // what it staged or committed that the person's next checkout would write (git-plants.ts): after
  // the clean-up above, so that the working tree it is compared with is the one left; first the
  // objects it forged (git-objects.ts), which git would read as they are
  for (const [rel, { git, worktree }] of repos) {
    const was = before.repos.get(rel);
    if (direct(rel))
      attempt(`the objects of ${rel}`, () =>
        removed.push(...removeForgedObjects(path.join(workspace, rel), before.at, rel)),
      );
    if (!was || was.git)
      attempt(`the history of ${rel}`, () =>
        removed.push(...undoGitPlants(workspace, rel, was?.git, git, worktree)),
      );
  }
  // a setting it added to a project file that makes a tool run code (a git hook's command, a
  // linter's plugin), or such a file it made a link: the file goes back to what it was before the
  // command, or goes if it made it (a link of the person's is theirs)
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
    if (was === undefined) remove(rel, shown("removed"));
    else if (!direct(rel)) removed.push(`(keel did not put back ${rel}: ${THROUGH_LINK})`);
    else
      attempt(rel, () => {
        removeHard(path.join(workspace, rel));
        writeFileSync(path.join(workspace, rel), was.text!);
        removed.push(shown("put back as it was before the command"));
      });
  }
  if (before.namedIncomplete)
    removed.push(
      "(git did not answer in time for every repository here, so what their config names was not all checked: look at their hooks folders and the scripts their aliases run before you use git there)",
    );
  if (after.incomplete)
    removed.push(
      `(keel checked only the first ${limit.toLocaleString("en")} entries of the workspace: files past them that run code later were not looked for)`,
    );
  return removed;
}

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
