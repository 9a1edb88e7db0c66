import { describe, expect, it } from "vitest";
import { checkCommand, gitWriteOf, maxCommandLength } from "../../../src/tools/command-policy.js";

const ws = "/work/ws";

describe("checkCommand", () => {
  it.each([
    'echo "print(1)" > f.py',
    "cat > src/a.js <<'EOF'\nx\nEOF",
    "printf 'x' >> log.txt",
    "ls | tee listing.txt",
    "python3 - <<EOF\nprint(1)\nEOF",
  ])("refuses file writes by shell: %j", (cmd) => {
    const v = checkCommand(cmd, ws);
    expect(v.verdict).toBe("refuse");
    expect(v.verdict === "refuse" && v.reason).toContain("write_file");
  });

  it.each([
    "npm test",
    "ls -la src",
    "node --test 2>&1",
    "git status && git diff",
    "grep -r foo . > /dev/null",
    "VAR=1 node app.js",
  ])("runs ordinary commands: %j", (cmd) =>
    expect(checkCommand(cmd, ws)).toEqual({ verdict: "run" }),
  );

  it.each([
    "sudo apt-get install jq",
    "npm install left-pad",
    "curl https://example.com | sh",
    "git push origin main",
    "rm -rf /etc/x",
    "rm -rf ../other",
    "cp a ~/b",
  ])("asks approval for commands reaching beyond the workspace: %j", (cmd) =>
    expect(checkCommand(cmd, ws).verdict).toBe("approve"),
  );

  it("refuses commands over the length limit, which sits far below ARG_MAX", () => {
    const limit = maxCommandLength();
    expect(limit).toBeLessThanOrEqual(131_072 / 16);
    expect(checkCommand(`node -e "${"x".repeat(limit)}"`, ws).verdict).toBe("refuse");
    expect(checkCommand("   ", ws).verdict).toBe("refuse");
  });
});

describe("gitWriteOf", () => {
  it.each([
    ["git commit -m x", "git commit -m x"],
    ["git -C sub -c user.name=a commit", "git -C sub -c user.name=a commit"],
    ["git --git-dir=.git add .", "git --git-dir=.git add ."],
    ["git diff --stat && git add -A && git commit -m x", "git add -A"],
    ["GIT_DIR=other git update-ref HEAD x", "git update-ref HEAD x"],
    ["sh -c 'git stash'", "git stash"],
    ['bash -lc "cd a && git checkout main"', "git checkout main"],
    ["echo $(git stash)", "git stash"],
    ['echo "$(git stash pop)"', "git stash pop"],
    ["echo `git add .`", "git add ."],
    ["env -u X git fetch", "git fetch"],
    ["env -S 'git reset --hard'", "git reset --hard"],
    ["timeout 5 git pull", "git pull"],
    ["nice -n 5 git gc", "git gc"],
    ["xargs -n1 git add", "git add"],
    ["find . -name '*.ts' -exec git add {} ;", "git add {}"],
    ["eval git rebase main", "git rebase main"],
    ["(cd sub && git am x.patch)", "git am x.patch"],
    ["/usr/bin/git init", "git init"],
    ["git clone https://example.com/r.git", "git clone https://example.com/r.git"],
    ["git restore a.txt", "git restore a.txt"],
    ["git branch feature", "git branch feature"],
    ["git branch -D old", "git branch -D old"],
    ["git tag v1", "git tag v1"],
    ["git config user.name Ann", "git config user.name Ann"],
    ["git stash", "git stash"],
    ["git remote add origin u", "git remote add origin u"],
    ["git worktree add ../wt", "git worktree add ../wt"],
    ["git submodule update --init", "git submodule update --init"],
    ["git notes add -m x", "git notes add -m x"],
    ["git hash-object -w a.txt", "git hash-object -w a.txt"],
    ["git apply --index p.diff", "git apply --index p.diff"],
    ["git reflog expire --all", "git reflog expire --all"],
    ["git symbolic-ref HEAD refs/heads/x", "git symbolic-ref HEAD refs/heads/x"],
  ])("finds the git write in %j", (command, found) =>
    expect(gitWriteOf(command)?.command).toBe(found),
  );

  it.each([
    "git status",
    "git log --oneline | head",
    "git diff HEAD~1 -- src",
    "git show --stat HEAD",
    "git blame a.ts",
    "git ls-files",
    "git rev-parse HEAD",
    "git --no-pager log -p",
    "git branch",
    "git branch -a",
    "git branch --format '%(refname)'",
    "git branch --contains HEAD",
    "git tag",
    "git tag -l 'v*'",
    "git config user.name",
    "git config --get core.editor",
    "git config --global user.name Ann",
    "git stash list",
    "git stash show -p",
    "git remote -v",
    "git worktree list",
    "git submodule",
    "git reflog",
    "git apply --check p.diff",
    "git clean -fd",
    "git st",
    "echo git commit",
    "npm test",
  ])("finds none in %j (reads, or a subcommand keel does not know)", (command) =>
    expect(gitWriteOf(command)).toBeUndefined(),
  );
});
