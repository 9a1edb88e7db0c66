/** The OS sandbox's policy as data: what commands may read, write and reach, and what the model is told. */
import { describe, expect, it } from "vitest";
import {
  allowedHosts,
  filesystemPolicy,
  hiddenPaths,
  INSTALL_HOSTS,
  NO_GRANTS,
  readableRoots,
  sandboxNotes,
  type Machine,
} from "../../../src/sandbox/policy.js";

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
    // patterns, not paths
    [`node -e 'x.replace(/\\n/g, " ")'`, []],
    ["sed -i '/^\\s*$/d' notes.txt", []],
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
  it("says .git is read-only when a write there failed, and which git command to name; not for a read", () => {
    const held = filesystemPolicy(WS, NO_GRANTS, machine, [`${WS}/.git`]);
    const git = (command: string, output: string) =>
      sandboxNotes({ command, output, blockedHosts: [], removed: [] }, WS, held, machine.home);
    expect(
      git("git ci -m x", `fatal: Unable to create '${WS}/.git/index.lock': Read-only file system`),
    ).toMatch(
      /^\[sandbox\] \.git is read-only to commands, in every repository here: .* say in your answer which git command is needed\.$/,
    );
    expect(git("git status && ls .git", "On branch main\nHEAD\nconfig")).toBe("");
  });
});
