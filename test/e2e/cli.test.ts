/** The keel command end to end: the built CLI as a child process against the fake Ollama server. */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import type { RunOutcome } from "../../src/session/outcome.js";
import type { FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { closedPort, runKeel } from "../support/cli.js";
import { call, calls, keelScript, fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";
import { workspaceState } from "../../src/files/state.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

describe("keel --help", () => {
  it("describes the commands and the run options", async () => {
    const top = await runKeel(["--help"]);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/run \[options\] \[request\]/);
    expect(top.stdout).toMatch(/demo/);
    for (const command of ["undo", "diff", "stats", "eval", "mcp", "doctor"])
      expect(top.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
    const run = await runKeel(["run", "--help"]);
    for (const flag of [
      "--workspace",
      "--model",
      "--ollama-url",
      "--thread",
      "--checkpoints",
      "--max-turns",
      "--yes",
      "--approval",
      "--check",
      "--json",
    ]) {
      expect(run.stdout).toContain(flag);
    }
    expect(run.stdout).toContain("Exit codes: 0 done");
  });

  it("ends every command's help with examples of that command", async () => {
    for (const command of [
      "",
      "run",
      "analyze",
      "models",
      "mcp",
      "doctor",
      "undo",
      "diff",
      "stats",
      "eval",
    ]) {
      const help = await runKeel([...(command ? [command] : []), "--help"]);
      const examples = help.stdout.split("Examples:\n")[1]?.split("\n\n")[0] ?? "";
      const lines = examples.split("\n").filter(Boolean);
      expect(lines.length, `keel ${command} --help`).toBeGreaterThan(0);
      expect(lines.every((l) => l.startsWith("  keel "))).toBe(true);
      expect(lines[0]).toMatch(new RegExp(`^  keel ${command || "\\S+"}\\b`));
    }
  });
});

describe("keel run", () => {
  it("builds a file and prints the JSON contract as the last stdout line", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("write_file", { path: "src/app.js", content: "console.log(1)\n" }))
          : { content: "Created src/app.js." },
      ),
    });
    const ws = tempWorkspace();
    const r = await runKeel([
      "run",
      "Create src/app.js that logs 1",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--thread",
      "t1",
      "--json",
    ]);
    expect(r.code).toBe(0);
    const { usage, settings, ...contract } = r.json as {
      usage: RunOutcome["usage"];
      settings: RunOutcome["settings"];
    };
    expect(contract).toEqual({
      status: "done",
      intent: "build",
      intent_source: "rules",
      thread_id: "t1",
      turns: 2,
      tool_calls: [{ name: "write_file", ok: true }],
      files_written: ["src/app.js"],
      summary: "Created src/app.js.",
      failures: [],
    });
    expect(settings).toMatchObject({ provider: "ollama", model: "qwen3:8b", maxTurns: 40 });
    // Per turn: the counts the server reported for each model turn (not the structured plan call).
    const turnsSeen = fake
      .chatRequests()
      .flatMap((req, i) =>
        (req.body as { format?: unknown }).format === undefined ? [fake!.prefill[i]!] : [],
      );
    expect(usage.turns.map((u) => [u.promptTokens, u.generatedTokens])).toEqual(
      turnsSeen.map((p) => [p.promptTokens, p.generatedTokens]),
    );
    expect(usage.promptTokens).toBe(turnsSeen.reduce((a, p) => a + p.promptTokens, 0));
    // The second turn extends the first: most of its prompt is reused, the tool result is new.
    expect(usage.turns[1]!.reusedTokens).toBeGreaterThan(usage.turns[1]!.newTokens);
    expect(usage.turns[1]!.newTokens).toBeGreaterThan(0);
    expect(usage.turns[0]!.tokensPerSecond).toBeGreaterThan(0);
    expect(r.stderr).toMatch(
      /tokens: prompt [\d,]+ \([\d,]+ new, ~[\d,]+ reused\) · generated \d+ at [\d.]+ tok\/s/,
    );
    expect(readFileSync(path.join(ws, "src/app.js"), "utf8")).toBe("console.log(1)\n");
    // keel's store is in its state folder; nothing of keel's is left in the workspace
    expect(existsSync(workspaceState(ws).db)).toBe(true);
    expect(existsSync(path.join(ws, ".keel"))).toBe(false);
    expect(r.stderr).toContain("write_file");
    expect(fake.chatBodies().every((b) => b.model === "qwen3:8b" && b.stream === true)).toBe(true);
  });

  it("exits 1 with a report when the run gives up", async () => {
    fake = await startFake({ script: keelScript(() => ({ content: "" })) });
    const r = await runKeel([
      "run",
      "Create a.txt",
      "-w",
      tempWorkspace(),
      "--ollama-url",
      fake.url,
      "--checkpoints",
      "memory",
      "--json",
    ]);
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ status: "gave_up", intent: "build", turns: 4 });
    expect(String(r.json?.summary)).toContain("Stopped: the model replied with nothing");
  });

  it("prints a human report without --json", async () => {
    fake = await startFake({
      script: keelScript(() => ({ content: "Hi! Ask me about your code." })),
    });
    const r = await runKeel([
      "run",
      "hello",
      "-w",
      tempWorkspace(),
      "--ollama-url",
      fake.url,
      "--checkpoints",
      "memory",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/intent\s+chat \(rules/);
    expect(r.stdout).toMatch(
      /DONE {2}thread \S+ · intent chat \(rules\) · 1 turn · 0 tool calls$/m,
    );
    expect(r.stdout).toContain("Hi! Ask me about your code.");
  });

  it("shows the model's reply once in the timeline", async () => {
    fake = await startFake({
      script: keelScript(() => ({ content: "Hi! Ask me about your code." })),
    });
    const r = await runKeel([
      "run",
      "hello",
      "-w",
      tempWorkspace(),
      "--ollama-url",
      fake.url,
      "--checkpoints",
      "memory",
    ]);
    expect(r.stdout.split("\n").filter((l) => l.includes("│"))).toEqual([
      "  │ Hi! Ask me about your code.",
    ]);
  });

  it("reads the request from stdin when it is -", async () => {
    fake = await startFake({
      script: keelScript(() => ({ content: "Hi! Ask me about your code." })),
    });
    const request = "hello\n\nwith a second paragraph, 'quotes' and $HOME";
    const r = await runKeel(
      ["run", "-", "-w", tempWorkspace(), "--ollama-url", fake.url, "--checkpoints", "memory"],
      { input: `${request}\n` },
    );
    expect(r.code).toBe(0);
    const users = fake
      .chatBodies({ turnsOnly: true })[0]!
      .messages!.filter((m) => m.role === "user");
    expect(users[0]!.content).toBe(request);
  });

  it("quotes a thread id with spaces or quotes in the command it says to resume with", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const thread = "fix the bug's cause";
    const r = await runKeel(
      ["run", "x", "-w", ".", "--ollama-url", url, "--retries", "0", "--thread", thread],
      { cwd: tempWorkspace() },
    );
    expect(r.code).toBe(3);
    const hint = /resume with: keel run --thread (.*) --ollama-url /m.exec(r.stdout)?.[1];
    expect(hint).toBe(`'fix the bug'\\''s cause'`);
    // the shell reads it back as the thread id
    expect(execFileSync("sh", ["-c", `printf %s ${hint}`]).toString()).toBe(thread);
  });
});

describe("the command keel says to resume with", () => {
  it("finds the thread from the folder keel ran in: the workspace, the store and the server it was given", async () => {
    const cwd = tempWorkspace();
    const ws = tempWorkspace("keel ws-");
    const down = `http://127.0.0.1:${await closedPort()}`;
    const given = ["-w", ws, "--checkpoints", "sqlite:store/k.db", "--thread", "t"];
    const r = await runKeel(
      [
        "run",
        "Create a.txt",
        ...given,
        "--ollama-url",
        down,
        "-m",
        "qwen3:8b",
        "--retries",
        "0",
        "--approval",
        "edits",
        "--allow-read",
        "/usr/share",
        "--api-key",
        "sk-secret",
      ],
      { cwd },
    );
    expect(r.code).toBe(3);
    const hint = /resume with: (keel run .*)$/m.exec(r.stdout)?.[1];
    // every setting its flags gave comes along: the server (a resume elsewhere would reach another
    // server) and what the run may do (a run started read-only must not resume able to write);
    // never the API key
    expect(hint).toBe(
      `keel run --thread t -w '${ws}' --checkpoints sqlite:store/k.db -m qwen3:8b --ollama-url ${down} --retries 0 --approval edits --allow-read /usr/share`,
    );
    expect(r.stdout + r.stderr).not.toContain("sk-secret");
    // the hint as the shell reads it, run in the same folder once the server is up, resumes
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("write_file", { path: "a.txt", content: "a\n" }))
          : { content: "Created a.txt." },
      ),
    });
    const words = execFileSync("sh", ["-c", `printf '%s\\n' ${hint!.slice("keel ".length)}`])
      .toString()
      .trim()
      .split("\n");
    const again = await runKeel([...words, "--ollama-url", fake.url, "--json"], { cwd });
    expect(again.stderr).toContain("resuming thread t");
    expect(again.json).toMatchObject({ status: "done", files_written: ["a.txt"] });
  });

  it("is not given when the store keeps nothing (--checkpoints memory)", async () => {
    const down = `http://127.0.0.1:${await closedPort()}`;
    const r = await runKeel(
      ["run", "x", "-w", tempWorkspace(), "--checkpoints", "memory", "--ollama-url", down],
      { cwd: tempWorkspace() },
    );
    expect(r.code).toBe(3);
    expect(r.stdout).not.toContain("keel run --thread");
    expect(r.stdout).toContain("--checkpoints memory kept nothing");
  });
});

describe("model server failures exit 3 with what to do", () => {
  it("Ollama down: names the URL and `ollama serve`", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const r = await runKeel([
      "run",
      "Create a.txt",
      "-w",
      tempWorkspace(),
      "--ollama-url",
      url,
      "--checkpoints",
      "memory",
      "--json",
    ]);
    expect(r.code).toBe(3);
    expect(r.json).toMatchObject({ status: "error" });
    expect(String(r.json?.error)).toContain(`cannot reach the Ollama server at ${url}`);
    expect(String(r.json?.error)).toContain("ollama serve");
  });

  it("a missing model: names it and `ollama pull`", async () => {
    fake = await startFake();
    const r = await runKeel([
      "run",
      "Create a.txt",
      "-w",
      tempWorkspace(),
      "--ollama-url",
      fake.url,
      "-m",
      "llama9:70b",
      "--checkpoints",
      "memory",
    ]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('has no model "llama9:70b"');
    expect(r.stdout).toContain("ollama pull llama9:70b");
  });

  it("a 503 that persists: bounded retries, then exit 3", async () => {
    fake = await startFake({
      script: () => ({
        fault: "status",
        status: 503,
        error: "server busy, please try again.  maximum pending requests exceeded",
      }),
    });
    const r = await runKeel([
      "run",
      "Create a.txt",
      "-w",
      tempWorkspace(),
      "--ollama-url",
      fake.url,
      "--retries",
      "1",
      "--checkpoints",
      "memory",
      "--json",
    ]);
    expect(r.code).toBe(3);
    expect(String(r.json?.error)).toContain("stayed busy (after 2 attempts)");
    expect(fake.chatRequests()).toHaveLength(2);
  });

  describe("a web server that is no model server (HTML error pages, as python -m http.server)", () => {
    it.each([
      [["run", "Create a.txt", "--checkpoints", "memory", "-w", "."], "ollama"],
      [["models"], "ollama"],
      [["run", "Create a.txt", "--checkpoints", "memory", "-w", "."], "openai"],
      [["models"], "openai"],
    ])("%j with provider %s: exit 3 without a retry, says so without the page", async (args, p) => {
      const web = await startWebServer();
      const server =
        p === "ollama"
          ? ["--ollama-url", web.url]
          : ["--provider", p, "--base-url", `${web.url}/v1`];
      const r = await runKeel([...args, ...server], { cwd: tempWorkspace() });
      const said = r.stdout + r.stderr;
      expect(r.code, said).toBe(3);
      expect(said).toMatch(
        /a web page \("Error response|GET \/api\/tags answered 404: no Ollama API/,
      );
      expect(said).toMatch(
        p === "ollama"
          ? /Check that the URL points at Ollama/
          : /Check that --base-url points at the server's \/v1 root/,
      );
      for (const wrong of ["<html", "(listing)", "ollama pull", "model_missing", "retry "])
        expect(said).not.toContain(wrong);
      // Nothing retried: a page is no passing failure.
      expect(web.requests.length).toBeGreaterThan(0);
      expect(new Set(web.requests).size).toBe(web.requests.length);
    });
  });
});

/** A web server answering every request with an HTML error page, as Python's http.server does. */
async function startWebServer() {
  const requests: string[] = [];
  const srv = createHttpServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const status = req.method === "GET" ? 404 : 501;
    res.writeHead(status, { "content-type": "text/html;charset=utf-8" });
    res.end(
      `<!DOCTYPE HTML>\n<html lang="en">\n    <head>\n        <meta charset="utf-8">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: ${status}</p>\n    </body>\n</html>\n`,
    );
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  onTestFinished(() => new Promise<void>((r) => srv.close(() => r())));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, requests };
}

describe("a SQLite store that cannot be opened exits 4, naming the file", () => {
  it.each([
    ["a file that is not a database", (ws: string) => writeFileSync(dbOf(ws), "garbage\n")],
    ["a folder where the file should be", (ws: string) => mkdirSync(dbOf(ws))],
  ])("%s", async (_, spoil) => {
    const ws = tempWorkspace();
    mkdirSync(workspaceState(ws).dir, { recursive: true });
    spoil(ws);
    for (const args of [
      ["run", "x", "-w", ws, "--json"],
      ["stats", "-w", ws],
    ]) {
      const r = await runKeel(args, {
        env: { OLLAMA_HOST: `http://127.0.0.1:${await closedPort()}` },
      });
      expect(r.code, args[0]).toBe(4);
      expect(r.stderr).toContain(`keel: cannot open the SQLite database ${dbOf(ws)}`);
      expect(r.stderr).not.toContain("unexpected failure");
    }
  });

  it("a folder that cannot be made (a read-only disk, a file in the way): no file to move aside", async () => {
    const ws = tempWorkspace();
    mkdirSync(path.dirname(workspaceState(ws).dir), { recursive: true });
    writeFileSync(workspaceState(ws).dir, "a file, not a folder\n");
    const r = await runKeel(["run", "x", "-w", ws]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`keel: cannot open the SQLite database ${dbOf(ws)}`);
    expect(r.stderr).toContain("--checkpoints memory");
    expect(r.stderr).not.toContain("Move it aside");
  });
});

const dbOf = (ws: string) => workspaceState(ws).db;

describe("usage errors exit 2", () => {
  it.each([
    [["run", "x", "--max-turns", "zero"], /expected a whole number/],
    [["run", "x", "-w", "/nonexistent/keel-ws"], /is not an existing folder/],
    [["run", "x", "--checkpoints", "redis://x"], /unknown checkpoint store/],
    [["frobnicate"], /unknown command/],
    // A flag error points at the help of the command that has the flag.
    [["run", "x", "--bogus"], /unknown option '--bogus'\n\(run keel run --help for usage\)/],
    [["mcp", "approve", "--bogus"], /\(run keel mcp approve --help for usage\)/],
    // No request and no thread to resume: say that, not that an invented thread is missing.
    [["run", "-w", "."], /^keel: no request: keel run "<request>" starts a run/m],
    // An empty path (an unset variable, -w "$DIR") is not this folder: nothing is granted or worked in.
    [["run", "x", "-w", ""], /^keel: --workspace is empty/m],
    [["diff", "-w", " "], /^keel: --workspace is empty/m],
    [["run", "x", "--allow-write", ""], /argument '' is invalid\. expected a path, not empty text/],
    [
      ["run", "x", "--allow-read", " "],
      /argument ' ' is invalid\. expected a path, not empty text/,
    ],
    // A page that cannot be written is named, not a stack trace.
    [
      ["stats", "--checkpoints", "memory", "--html", "no/such/folder/stats.html"],
      /^keel: cannot write no\/such\/folder\/stats\.html: ENOENT/m,
    ],
    // A thread id names a thread: not empty, not blank.
    ...["run", "analyze", "diff", "undo", "stats"].flatMap((command) =>
      ["", " "].map(
        (id) =>
          [
            [command, ...(command === "run" ? ["x"] : []), "--thread", id],
            /option '-t, --thread <id>' argument .* is invalid\. expected a thread id, not blank/,
          ] as [string[], RegExp],
      ),
    ),
    // A blank request is no request, from the command line or from stdin (-).
    [["run", " \n ", "-w", "."], /^keel: no request: keel run "<request>" starts a run/m],
    [["run", "-", "-w", "."], /^keel: no request: keel run "<request>" starts a run/m],
    // Refused at once, not retried as a failed request to the server.
    [["run", "x", "--model", ""], /expected a model name, not empty text/],
    [["run", "x", "--ollama-url", "notaurl"], /expected an http:\/\/ or https:\/\/ URL/],
    [["models", "--provider", "openai", "--base-url", "ftp://x"], /expected an http/],
    // A server name .mcp.json lacks, a file as the demo's folder: said, not a stack trace.
    [["mcp", "approve", "nosuch"], /^keel: there is no \S+\.mcp\.json, so no server nosuch/m],
    [["demo", "-w", process.execPath], /^keel: workspace \S+ is not a folder/m],
    // Every command that takes a workspace says when it is not a folder (no stack trace).
    ...["mcp", "doctor", "diff", "undo", "stats"].map(
      (command) =>
        [
          [command, "-w", "/nonexistent/keel-ws"],
          /^keel: workspace \S+ is not an existing folder/m,
        ] as [string[], RegExp],
    ),
  ])("%j", async (args, message) => {
    const ws = tempWorkspace();
    const r = await runKeel(args, { cwd: ws });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toContain("unexpected failure");
  });

  it("a variable the setting refuses is named, with what it takes", async () => {
    const r = await runKeel(["run", "x", "-w", tempWorkspace()], {
      env: { OLLAMA_HOST: "bad:::" },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/environment variable OLLAMA_HOST.*expected an http/);
  });
});

describe("keel demo", () => {
  it("runs the scripted build to done, labelled as scripted, with the files on disk", async () => {
    const ws = tempWorkspace();
    const r = await runKeel(["demo", "--json", "-w", ws]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("SCRIPTED DEMO");
    expect(r.json).toMatchObject({
      status: "done",
      intent: "build",
      files_written: ["src/api/users.js", "test/users.test.js"],
    });
    expect(String(r.json?.summary)).toMatch(/^\[scripted model\]/);
    const kinds = (r.json?.tool_calls as Array<{ name: string; ok: boolean }>).map(
      (c) => `${c.name}:${c.ok}`,
    );
    expect(kinds).toEqual([
      "run_command:false",
      "make_dir:false",
      "scaffold_endpoint:false",
      "write_file:false",
      "write_file:true",
      "write_file:true",
      "list_dir:true",
      "list_dir:true",
      "list_dir:false",
    ]);
    expect(readFileSync(path.join(ws, "src/api/users.js"), "utf8")).toContain("GET /users");
  });
});
