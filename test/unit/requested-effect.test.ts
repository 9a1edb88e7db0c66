import { tallyOfTrail } from "../../src/coder/call-tally.js";
import { describe, expect, it } from "vitest";
import { unmetEffect } from "../../src/coder/nodes/act/effect.js";
import { asksToRun, classifyByRules } from "../../src/coder/nodes/intent-classify/rules.js";
import { requestedEffect, unwritten } from "../../src/coder/requested-effect.js";
import { toolsForIntent } from "../../src/tools/registry.js";

/** Questions and analyses that also ask for a file, and the file each names (null: "a file"). */
const ASKS_TO_WRITE: Array<[string, string | null]> = [
  ["which module exports the logger? put the answer in notes.md", "notes.md"],
  ["Which module exports the logger? Put the answer in notes.md.", "notes.md"],
  ["Find all TODO comments and write them to todos.md", "todos.md"],
  ["List the HTTP routes, save the list as docs/routes.md", "docs/routes.md"],
  ["What does src/cli/main.ts do? Write a short summary into SUMMARY.md", "SUMMARY.md"],
  ["Which files import lodash? Please record your findings in FINDINGS.md", "FINDINGS.md"],
  ["How is the database configured? Note it down in `db-notes.txt`", "db-notes.txt"],
  ["Where is auth handled? Save the answer to ./answers/auth.md", "answers/auth.md"],
  ["Review src/app.ts (write your notes to review.md)", "review.md"],
  ["Is there dead code in src/? If so, dump the list into dead.txt", "dead.txt"],
  ["What is a closure in JavaScript? Then append the explanation to learn.md", "learn.md"],
  ["Which functions are unused? and update CHANGELOG.md with them", "CHANGELOG.md"],
  ["Explain the build pipeline; store the explanation in docs/build.md", "docs/build.md"],
  ["Count the tests per folder and put the table in a file called counts.csv", "counts.csv"],
  ["Summarise README.md, then write it to summary.txt", "summary.txt"],
  ["How many tests are there? Save it to a file.", null],
  ["Analyse the error handling and write your findings into a new markdown file", null],
  ["Welches Modul exportiert den Logger? Schreibe die Antwort in notes.md", "notes.md"],
  ["Quel module exporte le logger ? Écris la réponse dans notes.md", "notes.md"],
  ["¿Qué módulo exporta el logger? Guarda la respuesta en notes.md", "notes.md"],
  ["Qual módulo exporta o logger? Salve a resposta em notes.md", "notes.md"],
  ["Quale modulo esporta il logger? Scrivi la risposta in notes.md", "notes.md"],
  // where the result goes, said without a write verb, or with "answer"/"reply"
  ["Which files import lodash? Answer in answers.md", "answers.md"],
  ["What does parse.py do? Reply in a file called reply.txt", "reply.txt"],
  ["List the TODOs. Output: todos.txt", "todos.txt"],
  ["Which endpoints exist? I want the list in endpoints.md", "endpoints.md"],
  ["Find unused exports; the results should go to unused.txt", "unused.txt"],
  ["Give me a summary of the repo as summary.md", "summary.md"],
  ["make a file named todo.md with three items", "todo.md"],
  ["Lies README.md und schreibe eine Zusammenfassung in summary.md", "summary.md"],
  ["Lis README.md et écris un résumé dans resume.md", "resume.md"],
];

/** Requests that mention files and writing, and ask for nothing to be written. */
const ASKS_NOTHING = [
  "where do we save the config to settings.json?",
  "which module writes to app.log?",
  "Explain how we load and save settings to config.json",
  "summarize the changes in CHANGELOG.md",
  "list the endpoints in src/routes.ts",
  "Does node.js support ESM? e.g. in package.json",
  "What does the export in src/index.ts do?",
  "How does the logger write to stderr?",
  "Why does `npm run build` put the output in dist/index.js?",
  "where is the output file out.json created?",
  "How do I write to a file in Python, e.g. data.txt?",
  "Explain what put_item in db.py does",
  "the logger should write to app.log, why does it not?",
];

describe("requestedEffect: what a request asks to write, not how it is phrased", () => {
  for (const [request, file] of ASKS_TO_WRITE) {
    it(`asks to write ${file ?? "a file"}: ${request}`, () => {
      const e = requestedEffect(request);
      expect(e.writes).toBe(true);
      expect(e.paths).toEqual(file ? [file] : []);
    });
  }
  for (const request of ASKS_NOTHING) {
    it(`asks for nothing: ${request}`, () => {
      expect(requestedEffect(request)).toEqual({ paths: [], writes: false });
    });
  }
});

describe("routing by the requested effect", () => {
  for (const [request] of ASKS_TO_WRITE) {
    it(`a toolset with write_file: ${request}`, () => {
      const v = classifyByRules(request);
      expect(v.confidence).toBeGreaterThanOrEqual(0.7);
      expect(toolsForIntent(v.intent, [], false).map((t) => t.name)).toContain("write_file");
    });
  }
  it("a question that asks for nothing stays read-only analysis", () => {
    for (const request of ["which module exports the logger?", ...ASKS_NOTHING.slice(0, 5)]) {
      const v = classifyByRules(request);
      expect(v.intent === "analyze" || v.intent === "chat").toBe(true);
      expect(toolsForIntent(v.intent, [], false).map((t) => t.name)).not.toContain("write_file");
    }
  });
});

describe("unwritten: the requested files a run did not write", () => {
  it("a bare name is met in any folder, a path only by itself", () => {
    expect(unwritten(["notes.md"], ["docs/notes.md"])).toEqual([]);
    expect(unwritten(["notes.md"], ["notes.md"])).toEqual([]);
    expect(unwritten(["./Notes.md"], ["notes.md"])).toEqual([]);
    expect(unwritten(["docs/notes.md"], ["notes.md"])).toEqual(["docs/notes.md"]);
    expect(unwritten(["notes.md", "todo.md"], ["todo.md"])).toEqual(["notes.md"]);
    expect(unwritten(["notes.md"], [])).toEqual(["notes.md"]);
  });
});

describe("notes that are not instructions", () => {
  it("'Note: …' and 'note that …' ask for nothing", () => {
    expect(requestedEffect("Note: the config lives in settings.json").writes).toBe(false);
    expect(requestedEffect("Explain the parser. Note that the grammar is in parser.y").writes).toBe(
      false,
    );
  });
});

describe("asksToRun: a request that asks for something to be run", () => {
  it.each([
    "Create hi.sh that prints hi, then run it",
    "Fix the failing test in parse.py and run the tests",
    "can you run the tests?",
    "Install lodash and use it in utils.js",
    "Write hello.py and execute it",
    "Erstelle hallo.py und führe es aus",
    "Create a branch called feature-x",
  ])("asks: %s", (request) => expect(asksToRun(request)).toBe(true));
  it.each([
    "How do I run the tests?",
    "Explain how to run the tests",
    "What does npm test run?",
    "Write a Makefile with install and test targets",
    "Write a function that runs the tests",
    "Install instructions: write them to INSTALL.md",
    "Stop using var in app.js",
    "npm test fails, fix it",
  ])("does not: %s", (request) => expect(asksToRun(request)).toBe(false));
});

describe("unmetEffect: a run that asked for a command", () => {
  const entry = (ok: boolean, kind?: "refused" | "failed" | "needs_approval") => ({
    id: "c",
    name: "run_command",
    signature: "s",
    toolClass: "command" as const,
    ok,
    ...(kind ? { kind } : {}),
  });
  const state = (trail: ReturnType<typeof entry>[], intent: "build" | "chat" = "build") => ({
    request: "Create hi.sh that prints hi, then run it",
    filesWritten: ["hi.sh"],
    callTally: tallyOfTrail(trail),
    intent: { intent, source: "rules" as const, confidence: 0.9 },
  });
  const alone = { workspace: "/nowhere", interactive: false };
  it("is not done while every command was refused, and is once one ran (a failing one too)", () => {
    expect(unmetEffect(state([entry(false, "refused")]), alone)).toEqual({
      detail:
        "the request asks for a command to be run, and none ran (the run_command call was refused)",
    });
    expect(unmetEffect(state([]), alone)).toEqual({
      detail: "the request asks for a command to be run, and none ran",
    });
    const failed = [entry(false, "refused"), entry(false, "failed")];
    expect(unmetEffect(state(failed), alone)).toBe(undefined);
    expect(unmetEffect(state([entry(true)]), alone)).toBe(undefined);
  });
  it("a command that needed approval: a person's no stands; with no one to ask the run ends not done", () => {
    const unapproved = state([entry(false, "needs_approval")]);
    expect(unmetEffect(unapproved, { ...alone, interactive: true })).toBe(undefined);
    expect(unmetEffect(unapproved, alone)).toEqual({
      detail: expect.stringMatching(/none ran: run_command needs a person's approval .*--yes/),
      final: true,
    });
  });
  it("asks nothing of a run that was offered no run_command (chat, analysis)", () => {
    expect(unmetEffect(state([], "chat"), alone)).toBe(undefined);
  });
});
