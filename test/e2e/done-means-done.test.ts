/**
 * "done" means done (issue 27 item 6): a question that also asks for a file is routed to a toolset
 * with write_file; a run whose requested file was never written does not end `done`; `--json`
 * says which intent was chosen and by what, each failure's kind, and the settings in force. The
 * keel command runs against the fake Ollama over HTTP.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { runKeel } from "../support/cli.js";
import { call, calls, fakeOllamaPerTest, keelScript, tempWorkspace } from "../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();
const REQUEST = "which module exports the logger? put the answer in notes.md";

/** A workspace where src/log.ts exports the logger. */
function workspace(): string {
  const ws = tempWorkspace();
  mkdirSync(path.join(ws, "src"));
  writeFileSync(path.join(ws, "src/log.ts"), "export const logger = console;\n");
  writeFileSync(
    path.join(ws, "src/app.ts"),
    'import { logger } from "./log.js";\nlogger.info("up");\n',
  );
  return ws;
}

const run = (ws: string, ...more: string[]) =>
  runKeel([
    "run",
    REQUEST,
    "-w",
    ws,
    "--model",
    "qwen3:8b",
    "--ollama-url",
    fake!.url,
    "--json",
    ...more,
  ]);

const answered = (req: { messages: Array<{ role: string; tool_calls?: unknown }> }, tool: string) =>
  req.messages.some(
    (m) => m.role === "assistant" && JSON.stringify(m.tool_calls ?? []).includes(tool),
  );

describe("a question that asks for a file", () => {
  it("is routed with write_file, the file is on disk, and --json says how it was decided", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (!answered(req, "search_text") && req.toolNames.includes("search_text"))
          return calls(call("search_text", { pattern: "export const logger" }));
        if (!answered(req, "write_file"))
          return calls(
            call("write_file", { path: "notes.md", content: "src/log.ts exports the logger.\n" }),
          );
        return { content: "src/log.ts exports the logger; the answer is in notes.md." };
      }),
    });
    const ws = workspace();
    const r = await run(ws, "--context-window", "16384");
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(ws, "notes.md"), "utf8")).toBe(
      "src/log.ts exports the logger.\n",
    );
    // every model turn offered write_file
    const turns = fake.chatBodies({ turnsOnly: true });
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.every((b) => (b.tools ?? []).some((t) => t.function.name === "write_file"))).toBe(
      true,
    );
    expect(r.json).toMatchObject({
      status: "done",
      intent: "build",
      intent_source: "rules",
      failures: [],
      files_written: ["notes.md"],
      settings: { model: "qwen3:8b", provider: "ollama", contextWindow: 16384, approval: "auto" },
    });
    expect(JSON.stringify(r.json)).not.toMatch(/apiKey":"[^(]/);
  });

  it("a model that answers without writing the file: not done, exit 1, an honest summary", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        answered(req, "read_file")
          ? { content: "The logger is exported by src/log.ts. I have put the answer in notes.md." }
          : calls(call("read_file", { path: "src/log.ts" })),
      ),
    });
    const ws = workspace();
    const r = await run(ws);
    expect(existsSync(path.join(ws, "notes.md"))).toBe(false);
    expect(r.code).toBe(1);
    const json = r.json as Outcome;
    expect(json.status).toBe("gave_up");
    // it never acted: prose instead of action, then its repetition
    expect(json.failures).toContainEqual(expect.objectContaining({ stage: "turn", kind: "prose" }));
    expect(json.summary).toMatch(/Not done: the request asks for notes\.md to be written/);
    expect(json.summary).toMatch(/No file was written/);
  });

  it("a model that acts but never writes the file: the failure is 'unmet' and the model is told", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        answered(req, "run_command")
          ? { content: "src/log.ts exports the logger. The answer is in notes.md." }
          : calls(call("run_command", { command: "grep -rl 'export const logger' src" })),
      ),
    });
    const ws = workspace();
    const r = await run(ws, "--yes");
    expect(existsSync(path.join(ws, "notes.md"))).toBe(false);
    expect(r.code).toBe(1);
    const json = r.json as Outcome;
    expect(json.status).not.toBe("done");
    expect(json.failures).toContainEqual(expect.objectContaining({ stage: "turn", kind: "unmet" }));
    expect(json.summary).toMatch(/Not done: the request asks for notes\.md to be written/);
    const told = fake
      .chatBodies({ turnsOnly: true })
      .some((b) => (b.messages ?? []).some((m) => m.content.includes("the request is not done")));
    expect(told).toBe(true);
  });
});

describe("a request that asks for something to be run", () => {
  const RUN = "Create hi.sh that prints hi, then run it";
  const runIt = (ws: string) =>
    runKeel(["run", RUN, "-w", ws, "--ollama-url", fake!.url, "--json", "--yes"]);
  /** A model that writes hi.sh with `script`, runs `bash hi.sh`, then answers `answer`. */
  const writeThenRun = (script: string, answer: string) =>
    startFake({
      script: keelScript((req) => {
        if (!answered(req, "write_file"))
          return calls(call("write_file", { path: "hi.sh", content: script }));
        if (!answered(req, "run_command"))
          return calls(call("run_command", { command: "bash hi.sh" }));
        return { content: answer };
      }),
    });
  const said = (req: { messages: Array<{ content: string }> }, text: string) =>
    req.messages.some((m) => m.content.includes(text));

  it("is not done while its command never ran (refused), and is once the model runs it", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (!answered(req, "write_file"))
          return calls(call("write_file", { path: "hi.sh", content: "echo hi\n" }));
        if (!answered(req, "run_command"))
          return calls(call("run_command", { command: "bash hi.sh > out.txt" }));
        if (!said(req, "none ran")) return { content: "Done: hi.sh prints hi." };
        if (!said(req, "exit code 0")) return calls(call("run_command", { command: "bash hi.sh" }));
        return { content: "hi.sh prints hi; running it printed hi." };
      }),
    });
    const ws = tempWorkspace();
    const r = await runIt(ws);
    const json = r.json as Outcome;
    expect(json.failures).toContainEqual(expect.objectContaining({ stage: "turn", kind: "unmet" }));
    expect(json.status).toBe("done");
    expect(r.code).toBe(0);
    // the model was told why, and ran it the second time
    const bodies = fake.chatBodies({ turnsOnly: true });
    expect(
      bodies.some((b) =>
        (b.messages ?? []).some((m) =>
          m.content.includes(
            "the request asks for a command to be run, and none ran (the run_command call was refused)",
          ),
        ),
      ),
    ).toBe(true);
    expect(existsSync(path.join(ws, "out.txt"))).toBe(false);
  });

  it("a command that needs approval with no one to give it: not done at once, and the report says how", async () => {
    fake = await writeThenRun("echo hi\n", "Done: created hi.sh and ran it; it printed hi.");
    const ws = tempWorkspace();
    const r = await runKeel([
      "run",
      RUN,
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--json",
      "--approval",
      "edits",
    ]);
    const json = r.json as Outcome;
    expect(json.status).toBe("gave_up");
    expect(r.code).toBe(1);
    expect(json.summary).toMatch(
      /^Stopped: the request asks for a command to be run, and none ran: run_command needs a person's approval and no one was there to give it \(run keel in a terminal, or with --yes\)\./,
    );
    expect(json.summary).toContain("The model's summary: Done: created hi.sh and ran it");
    // no hint was sent after the final answer: the model was asked three times in all
    expect(fake.chatBodies({ turnsOnly: true })).toHaveLength(3);
  });

  it("a run done whose last command failed says so beside the model's answer", async () => {
    fake = await writeThenRun("exit 3\n", "hi.sh prints hi.");
    const ws = tempWorkspace();
    const r = await runIt(ws);
    expect(r.json).toMatchObject({
      status: "done",
      warnings: ["the last command the model ran failed (failed); check the answer against it"],
    });
    const text = await runKeel([
      "run",
      RUN,
      "-w",
      tempWorkspace(),
      "--ollama-url",
      fake.url,
      "--yes",
    ]);
    expect(text.stdout).toContain("note: the last command the model ran failed");
  });

  it("a model that never gets it to run: not done, and the report says so", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        answered(req, "write_file")
          ? { content: "Done: hi.sh prints hi." }
          : calls(call("write_file", { path: "hi.sh", content: "echo hi\n" })),
      ),
    });
    const ws = tempWorkspace();
    const r = await runIt(ws);
    const json = r.json as Outcome;
    expect(readFileSync(path.join(ws, "hi.sh"), "utf8")).toBe("echo hi\n");
    expect(json.status).not.toBe("done");
    expect(r.code).toBe(1);
    expect(json.summary).toMatch(
      /Not done: the request asks for a command to be run, and none ran/,
    );
  });
});

describe("a follow-up that says to go on", () => {
  it('"continue" takes the thread\'s request up again: its intent, and its file still to write', async () => {
    let cooperate = false;
    fake = await startFake({
      script: keelScript((req) => {
        const since = req.messages.findIndex((m) => m.content === "ok, continue");
        const told =
          since >= 0 && req.messages.slice(since).some((m) => m.content.startsWith("[keel] You"));
        // the follow-up's first answer claims it is done; told otherwise, the model writes it
        if (!cooperate || !told) return { content: "Done: the logger is exported by src/log.ts." };
        if (!answered(req, "write_file"))
          return calls(call("write_file", { path: "notes.md", content: "src/log.ts\n" }));
        return { content: "The answer is in notes.md." };
      }),
    });
    const ws = workspace();
    const first = await run(ws, "--thread", "t-go-on", "--max-turns", "4");
    expect(first.code).toBe(1);
    cooperate = true;
    const again = await runKeel([
      "run",
      "ok, continue",
      "-w",
      ws,
      "--thread",
      "t-go-on",
      "--ollama-url",
      fake.url,
      "--json",
    ]);
    expect(again.json).toMatchObject({
      status: "done",
      intent: "build",
      files_written: ["notes.md"],
    });
    // its "Done" without the file was not taken for done (a failure of the turn, then the file)
    expect((again.json as Outcome).failures.some((f) => f.stage === "turn")).toBe(true);
    expect(readFileSync(path.join(ws, "notes.md"), "utf8")).toBe("src/log.ts\n");
    // the model saw the follow-up as it was said, after the request it continues
    const last = fake
      .chatBodies({ turnsOnly: true })
      .at(-1)!
      .messages!.map((m) => m.content);
    expect(last).toContain("ok, continue");
    expect(last).toContain(REQUEST);
  });
});

type Outcome = {
  status: string;
  summary: string;
  failures: Array<{ stage: string; kind: string; count: number }>;
};
