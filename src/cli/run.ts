/** `keel run`: the coder agent on a request, or a thread resumed; the outcome printed for people or as JSON. */
import { printable } from "../printable.js";
import { createInterface } from "node:readline/promises";
import { question } from "./question.js";
import { Command } from "commander";
import pc from "picocolors";
import { ContextSchema } from "../coder/context.js";
import { readEnv } from "../env.js";
import { installCtrlC } from "./interrupt.js";
import { plural } from "./table.js";
import { checkpointsOf, DEFAULT_STORE, threadFlags, threadId, workspaceFolder } from "./options.js";
import { checkSettingsFiles } from "./server-options.js";
import { addSettingFlags, flagSettings, flagWords } from "./setting-flags.js";
import { recordRun } from "../undo/journal.js";
import { resumeCommand } from "../session/resume-command.js";
import type { RunOutcome } from "../session/outcome.js";
import { runSession } from "../session/session.js";

/** `keel run`'s own flags; the run settings' flags come from the settings table. */
interface RunFlags {
  workspace: string;
  thread?: string;
  checkpoints?: string;
  json?: boolean;
}

/**
 * Prints the outcome: a report for people, or one JSON object as the last stdout line. `where` are
 * the flags that find the thread again (resumeCommand), or null when its store kept nothing.
 */
export function printOutcome(
  o: RunOutcome,
  json: boolean | undefined,
  where: readonly string[] | null,
): void {
  const { exitCode, answerShown, ...fields } = o;
  if (json) {
    process.stdout.write(`${JSON.stringify(fields)}\n`);
    return;
  }
  const color = o.status === "done" ? pc.green : o.status === "error" ? pc.red : pc.yellow;
  const heading = o.status.toUpperCase();
  const out = [
    "",
    `${color(pc.bold(heading))}  ${pc.dim(`thread ${o.thread_id} · intent ${o.intent ?? "?"}${o.intent_source ? ` (${o.intent_source})` : ""} · ${plural(o.turns, "turn")} · ${plural(o.tool_calls.length, "tool call")}`)}`,
    o.files_written.length ? `files written: ${printable(o.files_written.join(", "))}` : "",
    o.error ? pc.red(printable(o.error)) : "",
    answerShown ? pc.dim("(the answer is above)") : printable(o.summary),
    ...(o.warnings ?? []).map((w) => pc.yellow(`note: ${w}`)),
    ...(where ? resumeHints(o, where) : [o.status === "error" ? pc.dim(NOTHING_KEPT) : ""]),
  ].filter(Boolean);
  process.stdout.write(`${out.join("\n")}\n`);
}

const NOTHING_KEPT =
  "after fixing it, run the same command again (--checkpoints memory kept nothing to resume)";

/** How to go on with a thread that stopped: resume it after an error, or follow it up. */
function resumeHints(o: RunOutcome, where: readonly string[]): string[] {
  if (o.status === "error")
    return [pc.dim(`after fixing it, resume with: ${resumeCommand(o.thread_id, where)}`)];
  // Stopped with Ctrl-C or SIGTERM, the summary says how to resume; a new request would be ignored.
  if (o.status === "done" || o.status === "interrupted") return [];
  return [pc.dim(`resume or follow up with: ${resumeCommand(o.thread_id, where, true)}`)];
}

/** Everything on stdin, without the blank lines and spaces around it. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").trim();
}

async function runCommand(
  given: string | undefined,
  flags: RunFlags,
  settings: Record<string, unknown>,
): Promise<number> {
  const workspace = workspaceFolder(flags.workspace);
  checkSettingsFiles(workspace, settings);
  const env = readEnv();
  // `-` reads the request from stdin, which then cannot answer questions.
  const fromStdin = given === "-";
  const request = fromStdin ? await readStdin() : given;
  const interactive = !flags.json && !fromStdin && Boolean(process.stdin.isTTY) && !env.ci;
  const rl = interactive
    ? createInterface({ input: process.stdin, output: process.stderr })
    : undefined;
  const stop = installCtrlC(
    (line) => process.stderr.write(`\n${line}\n`),
    (flags.checkpoints ?? "") !== "memory",
  );
  const log = (line: string) => (flags.json ? process.stderr : process.stdout).write(`${line}\n`);
  const words = flagWords(ContextSchema, settings);
  const where = threadFlags(flags, workspace, words);
  try {
    const outcome = await runSession({
      request,
      threadId: flags.thread,
      checkpoints: checkpointsOf(flags.checkpoints, workspace),
      settings: { workspace, ...settings },
      log,
      ask: rl ? (q) => question(rl, `${pc.cyan("?")} ${q}\n> `, stop.signal, stop.now) : undefined,
      signal: stop.signal,
      control: stop.control,
      where: where ?? [],
    });
    // what `keel undo` says to go on with the thread repeats these flags too
    if (where) await recordRun(workspace, outcome.thread_id, words);
    printOutcome(outcome, flags.json, where);
    const code = stop.exitCode(outcome.exitCode);
    // stopped: what the run started and did not finish (a request to a hung server, its timers)
    // does not hold the process once its outcome is out
    if (stop.signal.aborted) setTimeout(() => process.exit(code), 1_000).unref();
    return code;
  } finally {
    stop.dispose();
    rl?.close();
  }
}

export function runCommandDef(): Command {
  const run = new Command("run")
    .description("Run the coder agent on a request in a workspace (or resume a thread)")
    .argument(
      "[request]",
      'what to do, e.g. "Build a REST API endpoint GET /users"; - reads it from stdin',
    )
    .option(
      "-w, --workspace <dir>",
      "folder the agent works in; every path is confined to it",
      ".",
    );
  addSettingFlags(run, "run", ContextSchema)
    .option(
      "-t, --thread <id>",
      "thread id: an existing thread resumes, a new one starts",
      threadId,
    )
    .option(
      "--checkpoints <url>",
      `memory | sqlite:PATH | postgres://… (default: ${DEFAULT_STORE})`,
    )
    .option(
      "--json",
      "print one JSON object as the last line of stdout; the timeline goes to stderr",
    )
    .addHelpText(
      "after",
      `
Exit codes: 0 done · 1 not completed (gave up / needs a human) · 2 usage error · 3 model server failed · 4 checkpoint database unreachable · 130 Ctrl-C · 143 SIGTERM (both resumable)

Examples:
  keel run "Build a REST API endpoint GET /users in src/api/users.js" -w ./my-app
  keel run --thread run-2026-11-22-ab12cd          # resume after a crash, Ctrl-C or keel undo
  keel run "add input validation" --approval edits  # ask before each command
  keel run - < task.md                             # a long request, from a file
  keel diff && keel undo                           # what the agent changed; put it back
  keel run "explain how src/cli works" --json | tail -n 1 | jq .status`,
    )
    .action(async (request: string | undefined, flags: RunFlags) => {
      process.exitCode = await runCommand(request, flags, flagSettings(run));
    });
  return run;
}
