/**
 * The shadow repository: a git object store in the workspace's folder of keel's state
 * (`files/state.ts`: `<state>/workspaces/<name>-<hash>/undo`), outside the workspace and apart from
 * the user's own `.git`, that keeps every version of a file the agent touched. Its work tree is the
 * workspace, its index its own. Nothing of it is in the workspace, so nothing a repository ships
 * (a `.keel/undo` with a `commondir`, links to the person's files) is ever taken for it. keel's git
 * obeys nothing the workspace can influence: no system or global config, its own config rewritten
 * by keel before each use, hooks pointed at /dev/null, no fsmonitor, attributes files empty — a
 * `filter=` or `diff=` attribute in the workspace's `.gitattributes` names a driver no config it
 * reads defines.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { deflateSync } from "node:zlib";
import { FileRefused, readIn } from "../files/door.js";
import { ensureStateFolder, openWorkspaceState } from "../files/state.js";

const run = promisify(execFile);

/** The most of one file an undo snapshot keeps (a larger one makes its step not undoable). */
export const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024;
/** What a workspace snapshot never includes. */
const EXCLUDED = [".keel/", ".git/", "node_modules/"];
/** The shadow repository's whole config, written by keel before each use. */
const SHADOW_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n";
/**
 * Files by which git reads another folder's config, objects or repository (a command can write the
 * state folder where the workspace holds it, e.g. a workspace that is the home folder): removed
 * before each use.
 */
const REDIRECTS = ["commondir", "gitdir", "objects/info/alternates", "config.worktree"];
/** git's name for "no file". */
const ABSENT = /^0+$/;

/**
 * git's id of content as a blob (`git hash-object`), in the repository's hash, which its ids'
 * length says (SHA-1 unless 64).
 */
export const blobId = (bytes: Buffer, idLength = 40) =>
  createHash(idLength === 64 ? "sha256" : "sha1")
    .update(`blob ${bytes.length}\0`)
    .update(bytes)
    .digest("hex");

/** One file a step changed: its blob before and after (null: it did not exist). */
export interface FileChange {
  path: string;
  before: string | null;
  after: string | null;
}

export class ShadowRepo {
  private constructor(
    readonly workspace: string,
    private readonly gitDir: string,
  ) {}

  /**
   * The workspace's shadow repository in keel's state, created on first use; undefined when git is
   * missing.
   */
  static async open(workspace: string): Promise<ShadowRepo | undefined> {
    const gitDir = ensureStateFolder(openWorkspaceState(workspace).undo);
    const repo = new ShadowRepo(workspace, gitDir);
    if (!existsSync(path.join(gitDir, "HEAD"))) {
      try {
        await run("git", ["init", "--bare", "-q", gitDir], { env: repo.env() });
      } catch {
        return undefined;
      }
    }
    // git follows these out of the folder (another config, other objects): never keel's own
    for (const away of REDIRECTS) await rm(path.join(gitDir, away), { force: true });
    await mkdir(path.join(gitDir, "info"), { recursive: true });
    await writeFile(path.join(gitDir, "config"), SHADOW_CONFIG);
    await writeFile(path.join(gitDir, "info", "exclude"), EXCLUDED.join("\n") + "\n");
    await writeFile(path.join(gitDir, "info", "attributes"), "");
    return repo;
  }

  /**
   * Stores a workspace file's content as a loose object (what `git hash-object -w` writes, without a
   * process per file: a file tool's step stays cheap); null when there is no such regular file. The
   * file is read through the door (`files/door.ts`): a link, a FIFO or a folder at its path is no
   * file to keep, never followed or waited on; a file larger than `MAX_SNAPSHOT_BYTES` is an error.
   */
  async store(rel: string): Promise<string | null> {
    const content = await readIn(this.workspace, rel, { maxBytes: MAX_SNAPSHOT_BYTES }).catch(
      (e: unknown) => {
        if (e instanceof FileRefused && e.reason !== "too_large") return undefined;
        throw e;
      },
    );
    if (content === undefined) return null;
    const id = blobId(content);
    const file = path.join(this.gitDir, "objects", id.slice(0, 2), id.slice(2));
    if (!existsSync(file)) {
      await mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(
        tmp,
        deflateSync(Buffer.concat([Buffer.from(`blob ${content.length}\0`), content])),
      );
      await rename(tmp, file);
    }
    return id;
  }

  /** A snapshot of the whole workspace (what git would not ignore), as a tree id. */
  async snapshot(): Promise<string> {
    await this.git(["add", "-A", "--ignore-errors", "."]).catch(() => undefined);
    const { stdout } = await this.git(["write-tree"]);
    return stdout.trim();
  }

  /** The files that differ between two snapshots. */
  async changes(from: string, to: string): Promise<FileChange[]> {
    if (from === to) return [];
    const { stdout } = await this.git(["diff-tree", "-r", "-z", "--no-renames", from, to]);
    const parts = stdout.split("\0").filter(Boolean);
    const out: FileChange[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const [, , before, after] = parts[i]!.slice(1).split(" ");
      out.push({
        path: parts[i + 1]!,
        before: ABSENT.test(before!) ? null : before!,
        after: ABSENT.test(after!) ? null : after!,
      });
    }
    return out;
  }

  /** A stored blob's bytes. */
  async read(blob: string): Promise<Buffer> {
    const { stdout } = await run("git", [...this.base(), "cat-file", "blob", blob], {
      encoding: "buffer",
      env: this.env(),
      maxBuffer: 1 << 30,
    });
    return stdout;
  }

  private base(): string[] {
    return [
      "-c",
      "core.hooksPath=/dev/null",
      "-c",
      "core.fsmonitor=false",
      "-c",
      "core.autocrlf=false",
      "-c",
      "core.safecrlf=false",
      "-c",
      "gc.auto=0",
      "-c",
      "core.attributesFile=/dev/null",
      "-c",
      "core.untrackedCache=false",
      "-c",
      "submodule.recurse=false",
      `--git-dir=${this.gitDir}`,
      `--work-tree=${this.workspace}`,
    ];
  }

  private env(): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_ATTR_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
      GIT_INDEX_FILE: path.join(this.gitDir, "index"),
    };
  }

  private git(args: string[]) {
    return run("git", [...this.base(), ...args], {
      cwd: this.workspace,
      env: this.env(),
      maxBuffer: 1 << 28,
    });
  }
}
