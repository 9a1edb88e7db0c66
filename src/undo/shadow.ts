/**
 * The shadow repository: a git object store in `.keel/undo`, separate from the user's own `.git`,
 * that keeps every version of a file the agent touched. Its work tree is the workspace, its index its
 * own. keel's git obeys nothing the workspace can influence: no system or global config, its own
 * config rewritten by keel before each use (a clone or a person's hand cannot plant a filter
 * there), hooks pointed at /dev/null, no fsmonitor, attributes files empty — a `filter=` or `diff=`
 * attribute in the workspace's `.gitattributes` names a driver no config it reads defines. `.keel`
 * is refused to every tool and read-only to commands, and keel refuses a `.keel/undo` that is a link.
 */
import { execFile } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { deflateSync } from "node:zlib";
import { blobId } from "../sandbox/git-parse.js";

const run = promisify(execFile);

/** Where the shadow repository lives in the workspace. */
export const SHADOW_DIR = ".keel/undo";
/** What a workspace snapshot never includes. */
const EXCLUDED = [".keel/", ".git/", "node_modules/"];
/** The shadow repository's whole config, written by keel before each use. */
const SHADOW_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n";
/** git's name for "no file". */
const ABSENT = /^0+$/;

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

  /** The workspace's shadow repository, created on first use; undefined when git is missing. */
  static async open(workspace: string): Promise<ShadowRepo | undefined> {
    const gitDir = path.join(workspace, SHADOW_DIR);
    const repo = new ShadowRepo(workspace, gitDir);
    await mkdir(gitDir, { recursive: true });
    if (realpathSync(gitDir) !== gitDir)
      throw new Error(
        `${gitDir} is reached through a link; keel keeps its records only in ${SHADOW_DIR} itself`,
      );
    if (!existsSync(path.join(gitDir, "HEAD"))) {
      try {
        await run("git", ["init", "--bare", "-q", gitDir], { env: repo.env() });
      } catch {
        return undefined;
      }
    }
    await mkdir(path.join(gitDir, "info"), { recursive: true });
    await writeFile(path.join(gitDir, "config"), SHADOW_CONFIG);
    await writeFile(path.join(gitDir, "info", "exclude"), EXCLUDED.join("\n") + "\n");
    await writeFile(path.join(gitDir, "info", "attributes"), "");
    return repo;
  }

  /**
   * Stores a workspace file's content as a loose object (what `git hash-object -w` writes, without a
   * process per file: a file tool's step stays cheap); null when there is no such file.
   */
  async store(rel: string): Promise<string | null> {
    let content: Buffer;
    try {
      content = await readFile(path.join(this.workspace, rel));
    } catch {
      return null;
    }
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
