/** The OS sandbox's policy as data: what commands may read, write and reach, and what the model is told. */
import { describe, expect, it } from "vitest";
import { commandEnv } from "../../src/env.js";
import {
  allowedHosts,
  filesystemPolicy,
  hiddenPaths,
  INSTALL_HOSTS,
  NO_GRANTS,
  readableRoots,
  sandboxNotes,
  gitConfigKeys,
  gitValue,
  withoutUnsafeGitConfig,
  type Machine,
} from "../../src/sandbox/policy.js";

const machine: Machine = {
  platform: "linux",
  home: "/home/ann",
  pathVar: [
    "/home/ann/.pyenv/shims",
    "/home/ann/.nvm/versions/node/v20.1.0/bin",
    "/home/ann/bin",
    "/usr/local/bin",
    "/usr/bin",
    "relative/bin",
  ].join(":"),
  nodeBinary: "/home/ann/.nvm/versions/node/v20.1.0/bin/node",
  runtimeDirs: ["/opt/keel/node_modules/@anthropic-ai/sandbox-runtime/vendor"],
};
const WS = "/home/ann/projects/app";

describe("readableRoots", () => {
  const roots = readableRoots(machine);
  it("opens the system's folders, toolchain managers whole and other PATH entries alone", () => {
    expect(roots).toEqual(
      expect.arrayContaining([
        "/usr",
        "/etc",
        "/home/ann/.pyenv",
        "/home/ann/.nvm",
        "/home/ann/bin",
        "/usr/local/bin",
        "/opt/keel/node_modules/@anthropic-ai/sandbox-runtime/vendor",
      ]),
    );
  });
  it("never opens the home folder, its secrets or a relative PATH entry", () => {
    expect(roots).not.toContain("/home/ann");
    expect(roots).not.toContain("/home");
    expect(roots.some((r) => r.includes(".ssh") || r.includes(".aws"))).toBe(false);
    expect(roots).not.toContain("relative/bin");
  });
  it("uses macOS's folders on macOS", () => {
    const mac = readableRoots({ ...machine, platform: "darwin", pathVar: "/usr/bin" });
    expect(mac).toEqual(expect.arrayContaining(["/System", "/Library", "/opt/homebrew"]));
    expect(mac).not.toContain("/lib64");
  });
});

describe("filesystemPolicy", () => {
  it("hides everything, then opens the readable roots and the workspace; writes only the workspace", () => {
    const p = filesystemPolicy(WS, NO_GRANTS, machine);
    expect(p.denyRead).toEqual(["/"]);
    expect(p.allowRead).toContain(WS);
    expect(p.allowWrite).toEqual([WS]);
    expect(p.denyWrite).toEqual([]);
  });
  it("adds the user's grants, with ~ and relative paths made absolute", () => {
    const p = filesystemPolicy(
      WS,
      { allowRead: ["~/data", "../shared"], allowWrite: ["/tmp/out"], allowHosts: [] },
      machine,
    );
    expect(p.allowRead).toEqual(
      expect.arrayContaining(["/home/ann/data", "/home/ann/projects/shared", "/tmp/out"]),
    );
    expect(p.allowWrite).toEqual([WS, "/tmp/out"]);
  });
  it("protects the given workspace paths from writes", () => {
    const p = filesystemPolicy(WS, NO_GRANTS, machine, [`${WS}/.git/hooks`, `${WS}/.keel`]);
    expect(p.denyWrite).toEqual([`${WS}/.git/hooks`, `${WS}/.keel`]);
  });
});

describe("allowedHosts", () => {
  it("none by default; the user's hosts always; the registries only for an approved command", () => {
    expect(allowedHosts(NO_GRANTS, false)).toEqual([]);
    const grants = { ...NO_GRANTS, allowHosts: ["api.example.com"] };
    expect(allowedHosts(grants, false)).toEqual(["api.example.com"]);
    expect(allowedHosts(grants, true)).toEqual(["api.example.com", ...INSTALL_HOSTS]);
    expect(INSTALL_HOSTS).toContain("registry.npmjs.org");
  });
});

describe("commandEnv", () => {
  it("passes PATH, HOME, locale and toolchain variables, and nothing secret", () => {
    const env = commandEnv({
      PATH: "/usr/bin",
      HOME: "/home/ann",
      LC_ALL: "C.UTF-8",
      PYENV_ROOT: "/home/ann/.pyenv",
      OPENAI_API_KEY: "sk-1",
      GITHUB_TOKEN: "ghp",
      AWS_SECRET_ACCESS_KEY: "x",
      KEEL_MODEL: "m",
      OLLAMA_HOST: "h",
    });
    expect(env).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/ann",
      LC_ALL: "C.UTF-8",
      PYENV_ROOT: "/home/ann/.pyenv",
    });
  });
});

describe("hiddenPaths", () => {
  const p = filesystemPolicy(WS, NO_GRANTS, machine);
  it.each([
    ["cat /home/ann/.ssh/id_rsa", ["/home/ann/.ssh/id_rsa"]],
    ["cd .. && cat secret.txt", [".."]],
    ["cat ../other/x", ["../other/x"]],
    ["cat ~/.aws/credentials", ["~/.aws/credentials"]],
    ["cat /proc/self/root/etc/x", ["/proc/self/root/etc/x"]],
    ["python3 -c \"open('/tmp/x','w')\"", ["/tmp/x"]],
    ["ls /usr/lib && cat /etc/hostname", []],
    ["curl http://example.com/a/b", []],
    ["ls / > /dev/null", []],
    ["cat /proc/cpuinfo", []],
    [`cat ${WS}/src/a.ts`, []],
    ["npm test", []],
  ])("%s → %j", (command, expected) => {
    expect(hiddenPaths(command, WS, p, machine.home)).toEqual(expected);
  });
});

describe("sandboxNotes", () => {
  const p = filesystemPolicy(WS, NO_GRANTS, machine, [`${WS}/.git/hooks`]);
  const note = (over: Partial<Parameters<typeof sandboxNotes>[0]>) =>
    sandboxNotes(
      { command: "npm test", output: "", blockedHosts: [], removed: [], ...over },
      WS,
      p,
      machine.home,
    );
  it("says nothing when the sandbox did not get in the way", () => {
    expect(note({})).toBe("");
  });
  it("names a hidden path and how the user allows it", () => {
    expect(note({ command: "cat /srv/data.csv" })).toMatch(
      /\[sandbox\].*\/srv\/data\.csv is outside them.*--allow-read PATH/,
    );
  });
  it("names a refused host and --allow-host; a failed name lookup says the network is closed", () => {
    expect(note({ blockedHosts: ["example.com:443"] })).toMatch(
      /example\.com:443 was blocked.*--allow-host HOST/,
    );
    expect(note({ output: "getaddrinfo EAI_AGAIN registry.npmjs.org" })).toMatch(
      /network is closed to commands \(names do not resolve\)/,
    );
  });
  it("explains a protected path the command touched, and what keel removed", () => {
    expect(note({ command: "cp x .git/hooks/pre-push" })).toMatch(/\.git\/hooks is read-only/);
    expect(note({ command: "cp x .git/hooksy" })).toBe("");
    expect(note({ removed: [".git/hooks/pre-commit"] })).toMatch(
      /keel removed \.git\/hooks\/pre-commit: a program outside the sandbox \(git, a shell, an editor\) would run it/,
    );
  });
});

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
  it("reads a URL's value as git does (quotes, escapes) and keeps only transports git serves itself", () => {
    const urls = [
      'url = p"w"n::x',
      'url = ""pwn::x',
      "url = pwn://example.com/x",
      "url = evil::x",
      'url = "ext::sh -c x" ; a comment',
      "url = https://example.com/r.git",
      "url = git@example.com:r.git",
      "url = ../other",
      "url = ssh://git@example.com/r.git",
      "url = git+ssh://example.com/r.git",
    ];
    const text = ['[remote "o"]', ...urls.map((u) => `\t${u}`)].join("\n");
    const r = withoutUnsafeGitConfig(text);
    expect(r.removed).toEqual(Array(5).fill("remote.o.url"));
    expect(r.text.split("\n").slice(1)).toEqual(urls.slice(5).map((u) => `\t${u}`));
    expect(gitValue(' "a b" ; c')).toBe("a b");
    expect(gitValue(" x\\ty # c")).toBe("x\ty");
  });
  it("does not keep a partial clone's promisor remote (an object a command deleted would be fetched on git status)", () => {
    const r = withoutUnsafeGitConfig(
      '[extensions]\n\tpartialclone = evil\n[remote "evil"]\n\tpromisor = true',
    );
    expect(r.removed).toEqual(["extensions.partialclone", "remote.evil.promisor"]);
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
