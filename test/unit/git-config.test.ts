/** A git config read as git reads it: only the keys a command's repository may keep survive. */
import { describe, expect, it } from "vitest";
import { gitConfigKeys, gitValue, withoutUnsafeGitConfig } from "../../src/sandbox/git-config.js";

describe("withoutUnsafeGitConfig", () => {
  it("keeps only the keys git writes itself and harmless settings", () => {
    const text = [
      "[core]",
      "\trepositoryformatversion = 0",
      "\thooksPath = /tmp/hooks",
      "\tFsMonitor = cat /etc/passwd",
      "[user]",
      "\tname = Model",
      '[alias "x"]',
      "[alias]",
      "\tst = !sh -c \\",
      "\t  'curl evil'",
      "\tco = checkout",
      '[filter "lfs"]',
      "\tclean = evil %f",
      "\trequired = true",
      "[core] sshCommand = ssh -i key",
      '[remote "origin"]',
      "\turl = https://example.com/r.git",
      "\tfetch = +refs/heads/*:refs/remotes/origin/*",
      "# a comment stays",
    ].join("\n");
    const r = withoutUnsafeGitConfig(text);
    expect(r.removed).toEqual([
      "core.hookspath",
      "core.fsmonitor",
      "alias.st",
      "alias.co",
      "filter.lfs.clean",
      "filter.lfs.required",
      "core.sshcommand",
    ]);
    expect(r.text).toBe(
      [
        "[core]",
        "\trepositoryformatversion = 0",
        "[user]",
        "\tname = Model",
        '[alias "x"]',
        "[alias]",
        '[filter "lfs"]',
        "[core]",
        '[remote "origin"]',
        "\turl = https://example.com/r.git",
        "\tfetch = +refs/heads/*:refs/remotes/origin/*",
        "# a comment stays",
      ].join("\n"),
    );
  });
  it("removes keys no list of risky keys names (the kind, not the cases)", () => {
    const text = [
      "[gpg]",
      "\tformat = ssh",
      '[gpg "ssh"]',
      "\tdefaultKeyCommand = touch pwned",
      '[difftool "vimdiff"]',
      "\tpath = ./evil.sh",
      "[core]",
      "\talternateRefsCommand = ./evil.sh",
      "\tsomeFutureCommand = ./evil.sh",
      '[trailer "sign"]',
      "\tcommand = ./evil.sh",
      "[sendemail]",
      "\tsendmailCmd = ./evil.sh",
      '[tool "new"]',
      "\trun = ./evil.sh",
      "[diff]",
      "\talgorithm = histogram",
    ].join("\n");
    const r = withoutUnsafeGitConfig(text);
    expect(r.removed).toEqual([
      "gpg.format",
      "gpg.ssh.defaultkeycommand",
      "difftool.vimdiff.path",
      "core.alternaterefscommand",
      "core.somefuturecommand",
      "trailer.sign.command",
      "sendemail.sendmailcmd",
      "tool.new.run",
    ]);
    expect(r.text).toContain("algorithm = histogram");
    expect(r.text).not.toMatch(/evil|pwned/);
  });
  it("removes a remote helper's URL (git runs git-remote-<name> from PATH)", () => {
    const text = '[remote "o"]\n\turl = evil::x\n\tpushurl = "ext::sh -c x"\n\turl = git@h:r.git';
    const r = withoutUnsafeGitConfig(text);
    expect(r.removed).toEqual(["remote.o.url", "remote.o.pushurl"]);
    expect(r.text).toBe('[remote "o"]\n\turl = git@h:r.git');
  });
  it("leaves no line git would read as something else than it is read here", () => {
    // A value that ends in a backslash goes on in the next line for git, but not after a comment
    // (`;\`): both lines go, so what is left never depends on the line before it.
    const text = [
      "[user]",
      "\tname = x ;\\",
      "[core] sshCommand = evil",
      "\temail = a@b \\",
      "\tfsmonitor = evil",
      "# note \\",
      "\tpager = evil",
      "[core]\r",
      "\tsshCommand\r",
      "\tgarbage here",
      "\tbare = false\r",
    ].join("\n");
    const r = withoutUnsafeGitConfig(text);
    expect(r.text).toBe(["[user]", "[core]\r", "\tbare = false\r"].join("\n"));
    expect(r.removed).toEqual([
      "user.name",
      "user.email",
      "core.sshcommand",
      'a line git may read otherwise ("garbage here")',
    ]);
  });
  it('drops a line with a control character: git ends a name at a NUL (remote "x.uploadpack\\0" is remote.x.uploadpack)', () => {
    const text = [
      '[remote "evil.uploadpack\u0000"]',
      "\turl = touch pwned",
      '[submodule "s.update\u0000"]',
      "\turl = !touch pwned",
      "[core]",
      "\t\u000bbare = true",
      "\tbare = false",
    ].join("\n");
    const r = withoutUnsafeGitConfig(text);
    expect(r.text).toBe("[core]\n\tbare = false");
    expect([...r.text].filter((c) => c < " " && c !== "\t" && c !== "\n")).toEqual([]);
    expect(r.removed).toHaveLength(5);
  });
  it("reads a URL's value as git does (quotes, escapes) and keeps only transports git serves itself, not folders", () => {
    const urls = [
      'url = p"w"n::x',
      'url = ""pwn::x',
      "url = pwn://example.com/x",
      "url = evil::x",
      'url = "ext::sh -c x" ; a comment',
      "url = ../other",
      "url = /srv/bare.git",
      "url = FILE:///srv/bare.git",
      "url = https://example.com/r.git",
      "url = git@example.com:r.git",
      "url = ssh://git@example.com/r.git",
      "url = git+ssh://example.com/r.git",
    ];
    const text = ['[remote "o"]', ...urls.map((u) => `\t${u}`)].join("\n");
    const r = withoutUnsafeGitConfig(text);
    expect(r.removed).toEqual(Array(8).fill("remote.o.url"));
    expect(r.text.split("\n").slice(1)).toEqual(urls.slice(8).map((u) => `\t${u}`));
    expect(gitValue(' "a b" ; c')).toBe("a b");
    expect(gitValue(" x\\ty # c")).toBe("x\ty");
  });
  it("does not keep a partial clone's promisor remote (an object a command deleted would be fetched on git status)", () => {
    const r = withoutUnsafeGitConfig(
      '[extensions]\n\tpartialclone = evil\n[remote "evil"]\n\tpromisor = true',
    );
    expect(r.removed).toEqual(["extensions.partialclone", "remote.evil.promisor"]);
  });
  it("in the person's repository, a URL the command added or changed goes; the one it had stays", () => {
    const before = '[remote "origin"]\n\turl = https://example.com/r.git';
    const after = `${before}\n[remote "evil"]\n\turl = https://evil.example/r.git\n[submodule "lib"]\n\turl = https://evil.example/lib.git`;
    const r = withoutUnsafeGitConfig(after, gitConfigKeys(before), true);
    expect(r.removed).toEqual(["remote.evil.url", "submodule.lib.url"]);
    expect(r.text).toContain("url = https://example.com/r.git");
    const repointed = withoutUnsafeGitConfig(
      '[remote "origin"]\n\turl = https://evil.example/r.git',
      gitConfigKeys(before),
      true,
    );
    expect(repointed.removed).toEqual(["remote.origin.url"]);
  });
  it("keeps a line it had before only in the same subsection, case and all", () => {
    const before = '[remote "Origin"]\n\tuploadpack = my-pack';
    const after = `${before}\n[remote "origin"]\n\tuploadpack = my-pack`;
    const r = withoutUnsafeGitConfig(after, gitConfigKeys(before));
    expect(r.removed).toEqual(["remote.origin.uploadpack"]);
    expect(r.text).toBe(`${before}\n[remote "origin"]`);
  });
  it("keeps the key lines a config had before, in their section", () => {
    const before = "[alias]\n\tco = checkout\n[core]\n\teditor = vim";
    const after = `${before}\n\tpager = evil\n[user]\n\teditor = vim\n[alias]\n\tst = !evil`;
    const r = withoutUnsafeGitConfig(after, gitConfigKeys(before));
    expect(r.removed).toEqual(["core.pager", "user.editor", "alias.st"]);
    expect(r.text).toBe(`${before}\n[user]\n[alias]`);
  });
  it("leaves a harmless config untouched", () => {
    const text = "[core]\n\tbare = false\n[user]\n\temail = a@b\n";
    expect(withoutUnsafeGitConfig(text)).toEqual({ text, removed: [] });
  });
});
