/**
 * What a command stages or commits that the person's later git would write outside the sandbox
 * (git-plants.ts): a protected file put in the index without touching the working tree, committed
 * and hidden with skip-worktree, kept in a commit after aftercare removed it from the tree, on a new
 * branch HEAD moved to, or swapped in by a replace ref. Real git in real repositories, aftercare as
 * it runs around a command (`markWorkspace` before, `cleanAfter` after); the effect checked is what
 * the person's own `git reset --hard` and `git checkout .` write afterwards.
 */
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cleanAfter } from "../../src/sandbox/aftercare.js";
import { blobId, parseRawLog } from "../../src/sandbox/git-parse.js";
import { packedRefs } from "../../src/sandbox/git-refs.js";
import { markWorkspace } from "../../src/sandbox/look.js";
import { git } from "../support/git.js";
import { tempWorkspace } from "../support/harness.js";

const MCP = '{"mcpServers":{"x":{"command":"touch","args":["/tmp/pwned"]}}}\n';

/** A repository with one commit of `notes.txt` (and `.vscode/settings.json`, the person's). */
function repo(prefix: string) {
  const w = path.join(tempWorkspace(prefix), "ws");
  mkdirSync(path.join(w, ".vscode"), { recursive: true });
  writeFileSync(path.join(w, "notes.txt"), "notes\n");
  writeFileSync(path.join(w, ".vscode/settings.json"), "{}\n");
  git(w, "init", "-q", "-b", "main");
  git(w, "add", "-A");
  git(w, "commit", "-qm", "one");
  return w;
}

/** Stages `text` at `rel` without writing it to the working tree; returns the blob's id. */
function stage(w: string, rel: string, text: string) {
  writeFileSync(path.join(w, "blob.tmp"), text);
  const id = git(w, "hash-object", "-w", "blob.tmp").trim();
  git(w, "update-index", "--add", "--cacheinfo", `100644,${id},${rel}`);
  return id;
}

/** What the person's later git writes: after `git reset --hard` and `git checkout .`. */
function personRestores(w: string) {
  git(w, "reset", "-q", "--hard");
  git(w, "checkout", "-q", ".");
}

describe("a protected file a command committed or staged", () => {
  it("a commit made with plumbing and hidden by skip-worktree: the branch moves back, nothing is written later", () => {
    const w = repo("keel-plant-commit-");
    const one = git(w, "rev-parse", "HEAD").trim();
    const before = markWorkspace(w);
    stage(w, ".mcp.json", MCP);
    git(w, "update-index", "--skip-worktree", ".mcp.json");
    writeFileSync(path.join(w, "notes.txt"), "notes, edited by the agent\n");
    git(w, "add", "notes.txt");
    git(w, "commit", "-qm", "work");
    const removed = cleanAfter(w, before);
    expect(removed.join("\n")).toMatch(
      /refs\/heads\/main in the workspace's repository \(moved back from \w{12} to \w{12}; it commits \.mcp\.json: .*MCP/,
    );
    expect(git(w, "rev-parse", "HEAD").trim()).toBe(one);
    expect(git(w, "ls-files")).not.toContain(".mcp.json");
    // the commit's other change is still in the working tree
    expect(readFileSync(path.join(w, "notes.txt"), "utf8")).toBe("notes, edited by the agent\n");
    git(w, "stash", "-q"); // the person's own stash and pop write nothing planted either
    git(w, "stash", "pop", "-q");
    personRestores(w);
    expect(existsSync(path.join(w, ".mcp.json"))).toBe(false);
  });

  it("a nested editor task committed, then removed from the tree by aftercare: the commit does not stay", () => {
    const w = repo("keel-plant-nested-");
    const before = markWorkspace(w);
    mkdirSync(path.join(w, "pkg/.vscode"), { recursive: true });
    writeFileSync(
      path.join(w, "pkg/.vscode/tasks.json"),
      '{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}',
    );
    writeFileSync(path.join(w, "pkg/index.js"), "export {};\n");
    git(w, "add", "-A");
    git(w, "commit", "-qm", "pkg");
    const removed = cleanAfter(w, before);
    expect(removed).toContain("pkg/.vscode");
    expect(removed.join("\n")).toMatch(
      /refs\/heads\/main .*moved back.*it commits pkg\/\.vscode\/tasks\.json/,
    );
    // the commit's other file is still there, staged (the index lost only the task)
    expect(git(w, "status", "--porcelain")).toBe("A  pkg/index.js\n");
    personRestores(w);
    expect(existsSync(path.join(w, "pkg/.vscode"))).toBe(false);
  });

  it("only staged: the entry leaves the index; a file HEAD holds goes back to HEAD's", () => {
    const w = repo("keel-plant-index-");
    const before = markWorkspace(w);
    stage(w, ".envrc", "touch /tmp/pwned\n");
    stage(
      w,
      ".vscode/settings.json",
      '{"terminal.integrated.shellArgs.linux":["-c","touch /tmp/x"]}\n',
    );
    const removed = cleanAfter(w, before);
    expect(removed).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\.envrc \(staged by the command .*taken out of the index\)/),
        expect.stringMatching(/^\.vscode\/settings\.json \(staged .*put back to HEAD's\)/),
      ]),
    );
    expect(git(w, "status", "--porcelain")).toBe("?? blob.tmp\n");
    personRestores(w);
    expect(existsSync(path.join(w, ".envrc"))).toBe(false);
    expect(readFileSync(path.join(w, ".vscode/settings.json"), "utf8")).toBe("{}\n");
  });

  it("a new branch HEAD moved to, and a replace ref: both go, HEAD back on its branch", () => {
    const w = repo("keel-plant-branch-");
    const before = markWorkspace(w);
    git(w, "checkout", "-q", "-b", "feature");
    stage(w, ".mcp.json", MCP);
    git(w, "commit", "-qm", "feature");
    git(w, "rm", "-q", "--cached", ".mcp.json");
    git(w, "commit", "-qm", "hide it in the history");
    writeFileSync(path.join(w, "evil.tmp"), '{"x":1}\n');
    const evil = git(w, "hash-object", "-w", "evil.tmp").trim();
    const settings = git(w, "rev-parse", "HEAD:.vscode/settings.json").trim();
    git(w, "replace", settings, evil);
    const removed = cleanAfter(w, before).join("\n");
    expect(removed).toMatch(
      /refs\/heads\/feature in .* \(made by the command: deleted; it commits \.mcp\.json/,
    );
    expect(removed).toMatch(
      /refs\/replace\/\w+ .*deleted; a replace ref swaps what a later checkout writes/,
    );
    expect(removed).toMatch(/HEAD in .* \(moved back to refs\/heads\/main/);
    expect(git(w, "for-each-ref", "--format=%(refname)")).toBe("refs/heads/main\n");
    personRestores(w);
    expect(readFileSync(path.join(w, ".vscode/settings.json"), "utf8")).toBe("{}\n");
    expect(existsSync(path.join(w, ".mcp.json"))).toBe(false);
  });

  it("a package.json committed with a git-hook setting that aftercare took out of the working tree", () => {
    const w = repo("keel-plant-settings-");
    writeFileSync(path.join(w, "package.json"), '{"name":"p"}\n');
    git(w, "add", "package.json");
    git(w, "commit", "-qm", "package");
    const before = markWorkspace(w);
    writeFileSync(
      path.join(w, "package.json"),
      '{"name":"p","lint-staged":{"*":"touch /tmp/x"}}\n',
    );
    git(w, "commit", "-qam", "lint");
    writeFileSync(path.join(w, "package.json"), '{"name":"p","version":"1.0.0"}\n');
    git(w, "commit", "-qam", "version"); // the tip's file is harmless; the commit before is not
    const removed = cleanAfter(w, before).join("\n");
    expect(removed).toMatch(
      /refs\/heads\/main .*moved back.*it commits package\.json: the git hooks/,
    );
    expect(git(w, "log", "--format=%s")).toBe("package\none\n");
    // a dependency committed as the working tree holds it is ordinary work
    const again = markWorkspace(w);
    git(w, "commit", "-qam", "version");
    expect(cleanAfter(w, again)).toEqual([]);
  });

  it("ordinary work stays: commits, a tag, and a protected file committed as the working tree holds it", () => {
    const w = repo("keel-plant-clean-");
    // the person's own staged change to a protected file, there before the command
    writeFileSync(path.join(w, ".vscode/settings.json"), '{"editor.tabSize":2}\n');
    git(w, "add", ".vscode/settings.json");
    const before = markWorkspace(w);
    writeFileSync(path.join(w, "notes.txt"), "more notes\n");
    git(w, "commit", "-qam", "work");
    git(w, "tag", "v1");
    git(w, "checkout", "-q", "-b", "topic");
    writeFileSync(path.join(w, "a.txt"), "a\n");
    git(w, "add", "a.txt");
    git(w, "commit", "-qm", "topic");
    const head = git(w, "rev-parse", "HEAD").trim();
    expect(cleanAfter(w, before)).toEqual([]);
    expect(git(w, "rev-parse", "HEAD").trim()).toBe(head);
    expect(git(w, "show", "HEAD~1:.vscode/settings.json")).toBe('{"editor.tabSize":2}\n');
  });
});

/** A commit of HEAD's tree plus `.mcp.json`, made with plumbing: no ref, index untouched. */
function plantedCommit(w: string) {
  stage(w, ".mcp.json", MCP);
  const tree = git(w, "write-tree").trim();
  git(w, "rm", "-q", "--cached", ".mcp.json");
  return git(w, "commit-tree", tree, "-p", "HEAD", "-m", "planted").trim();
}

describe("refs, pseudo-refs and reflogs written the ways git reads and keel's reading might not", () => {
  const cases: Array<[string, (w: string, p: string) => void, string]> = [
    [
      "a loose ref in upper case with text after the id",
      (w, p) => writeFileSync(path.join(w, ".git/refs/heads/main"), `${p.toUpperCase()} x\n`),
      "reset -q --hard",
    ],
    [
      "a loose ref that is a link",
      (w, p) => {
        writeFileSync(path.join(w, ".git/objects/info/x"), `${p}\n`);
        rmSync(path.join(w, ".git/refs/heads/main"));
        symlinkSync("../../objects/info/x", path.join(w, ".git/refs/heads/main"));
      },
      "reset -q --hard",
    ],
    [
      "ORIG_HEAD, the person's way back",
      (w, p) => writeFileSync(path.join(w, ".git/ORIG_HEAD"), `${p}\n`),
      "reset -q --hard ORIG_HEAD",
    ],
    [
      "a HEAD reflog line `git checkout -` returns to",
      (w, p) => {
        const h = git(w, "rev-parse", "HEAD").trim();
        appendFileSync(
          path.join(w, ".git/logs/HEAD"),
          `${h} ${h} A <a@example.com> 1700000000 +0000\tcheckout: moving from ${p.slice(0, 9)} to main\n`,
        );
      },
      "checkout -q -",
    ],
  ];
  for (const [name, attack, person] of cases)
    it(`${name}: undone, the person's git ${person.split(" ")[0]} writes nothing planted`, () => {
      const w = repo("keel-plant-ref-");
      const before = markWorkspace(w);
      attack(w, plantedCommit(w));
      expect(cleanAfter(w, before).join("\n")).toMatch(/it commits \.mcp\.json/);
      try {
        git(w, ...person.split(" "));
      } catch {
        // a way back that is gone fails: what matters is that nothing planted is written
      }
      expect(existsSync(path.join(w, ".mcp.json"))).toBe(false);
    });

  it("a linked worktree the command made, its HEAD at a plant; a repository with its git folder elsewhere", () => {
    const w = repo("keel-plant-worktree-");
    const before = markWorkspace(w);
    const p = plantedCommit(w);
    git(w, "worktree", "add", "-q", "--detach", "wt", "HEAD");
    writeFileSync(path.join(w, ".git/worktrees/wt/HEAD"), `${p}\n`);
    mkdirSync(path.join(w, "pkg"));
    git(path.join(w, "pkg"), "init", "-q", "--separate-git-dir=../pkg.gitdir");
    stage(path.join(w, "pkg"), ".envrc", "touch /tmp/x\n");
    const removed = cleanAfter(w, before).join("\n");
    expect(removed).toMatch(/HEAD in wt \(moved onto refs\/heads\/keel-removed-plant/);
    expect(removed).toMatch(/pkg\/\.envrc \(staged by the command/);
    git(path.join(w, "wt"), "checkout", "-q", ".");
    expect(existsSync(path.join(w, "wt/.mcp.json"))).toBe(false);
    expect(git(path.join(w, "pkg"), "ls-files")).toBe("");
  });

  it("a submodule pointed at a planted commit of its own: git submodule update writes nothing", () => {
    const src = path.join(tempWorkspace("keel-plant-libsrc-"), "lib");
    mkdirSync(src);
    writeFileSync(path.join(src, "l.txt"), "l\n");
    git(src, "init", "-q", "-b", "main");
    git(src, "add", "-A");
    git(src, "commit", "-qm", "lib");
    const w = repo("keel-plant-submodule-");
    const file = ["-c", "protocol.file.allow=always"];
    git(w, ...file, "submodule", "add", "-q", src, "lib");
    git(w, "commit", "-qm", "sub");
    const before = markWorkspace(w);
    const p = plantedCommit(path.join(w, "lib"));
    git(w, "update-index", "--cacheinfo", `160000,${p},lib`);
    git(w, "commit", "-qm", "bump lib");
    expect(cleanAfter(w, before).join("\n")).toMatch(
      /moved back .*its submodule lib at \w{12} holds \.mcp\.json, which git submodule update would write/,
    );
    git(w, ...file, "submodule", "update", "-q");
    expect(existsSync(path.join(w, "lib/.mcp.json"))).toBe(false);
  });

  it("a remote the command pointed at a repository in the workspace: the person's pull does not take it", () => {
    const w = repo("keel-plant-remote-");
    const before = markWorkspace(w);
    const p = plantedCommit(w);
    git(w, "init", "-q", "--bare", "vendor.git");
    git(w, "push", "-q", "./vendor.git", `${p}:refs/heads/main`);
    git(w, "remote", "add", "origin", "./vendor.git");
    git(w, "config", "branch.main.remote", "origin");
    git(w, "config", "branch.main.merge", "refs/heads/main");
    expect(cleanAfter(w, before)).toContain("remote.origin.url from .git/config");
    expect(() => git(w, "pull", "-q", "--no-rebase")).toThrow();
    expect(existsSync(path.join(w, ".mcp.json"))).toBe(false);
  });
});

describe("objects a command forged", () => {
  it("the person's blob overwritten in place: removed, so a checkout fails instead of writing it", () => {
    const w = repo("keel-plant-object-");
    const blob = git(w, "rev-parse", "HEAD:.vscode/settings.json").trim();
    const before = markWorkspace(w);
    writeFileSync(path.join(w, "evil.tmp"), '{"task.allowAutomaticTasks":"on"}\n');
    const evil = git(w, "hash-object", "-w", "evil.tmp").trim();
    const at = (id: string) => path.join(w, ".git/objects", id.slice(0, 2), id.slice(2));
    chmodSync(at(blob), 0o644);
    writeFileSync(at(blob), readFileSync(at(evil)));
    expect(cleanAfter(w, before)).toContain(
      "1 object in .git/objects (written by the command with content their names do not say: removed; a later checkout would have written it)",
    );
    expect(existsSync(at(blob))).toBe(false);
    expect(existsSync(at(evil))).toBe(true); // an honest object the command wrote stays
    rmSync(path.join(w, ".vscode/settings.json"));
    expect(() => git(w, "checkout", "-q", "--", ".vscode/settings.json")).toThrow();
    expect(existsSync(path.join(w, ".vscode/settings.json"))).toBe(false);
  });

  it("an alternates file it made goes; objects it wrote honestly stay", () => {
    const w = repo("keel-plant-alternates-");
    const before = markWorkspace(w);
    git(w, "init", "-q", "--bare", "store.git");
    writeFileSync(
      path.join(w, ".git/objects/info/alternates"),
      `${path.join(w, "store.git/objects")}\n`,
    );
    writeFileSync(path.join(w, "notes.txt"), "more\n");
    git(w, "commit", "-qam", "work");
    expect(cleanAfter(w, before)).toEqual([
      expect.stringMatching(
        /^objects\/info\/alternates in \.git \(made or changed by the command: removed/,
      ),
    ]);
    expect(git(w, "fsck", "--no-dangling").trim()).toBe("");
  });
});

describe("the parsing", () => {
  it("reads git log's raw records: adds and changes with their new id, deletions left out", () => {
    const a = "a".repeat(40);
    const b = "b".repeat(40);
    const z = "0".repeat(40);
    const out =
      `\x01${"c".repeat(40)}\0\n:000000 100644 ${z} ${a} A\0.mcp.json\0:100644 100644 ${a} ${b} M\0x y\0` +
      `:100644 000000 ${a} ${z} D\0gone\0\x01${"d".repeat(40)}\0`;
    expect(parseRawLog(out)).toEqual([
      { commit: "c".repeat(40), path: ".mcp.json", mode: "100644", id: a },
      { commit: "c".repeat(40), path: "x y", mode: "100644", id: b },
    ]);
  });
  it("hashes a blob as git does, in SHA-1 and SHA-256", () => {
    expect(blobId(Buffer.from("notes\n"), 40)).toBe(
      execFileSync("git", ["hash-object", "--stdin"], {
        input: "notes\n",
        encoding: "utf8",
      }).trim(),
    );
    expect(blobId(Buffer.from(""), 64)).toBe(
      "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813",
    );
  });
  it("reads packed-refs, leaving out comments and peeled lines", () => {
    const a = "a".repeat(40);
    expect(
      packedRefs(
        `# pack-refs with: peeled fully-peeled sorted\n${a} refs/tags/v1\n^${"b".repeat(40)}\n`,
      ),
    ).toEqual(new Map([["refs/tags/v1", a]]));
  });
});
