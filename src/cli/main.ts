#!/usr/bin/env node
/** The keel command. Parses arguments, wires the session to the terminal, maps outcomes to exit codes. */
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline/promises";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import pc from "picocolors";
import { ZodError } from "zod";
import { ContextSchema, settingDefault } from "../agent/context.js";
import { DEFAULT_MODEL } from "../run/settings.js";
import { readEnv } from "../env.js";
import { CheckpointUrlError, defaultCheckpoints } from "../persistence/checkpointer.js";
import { PersistenceError } from "../persistence/open.js";
import { SettingsFileError } from "../run/settings-file.js";
import { McpConfigError } from "../mcp/config.js";
import { formatAnalyzeOutcome, runAnalyze } from "./analyze.js";
import { runDemo } from "./demo.js";
import { formatDoctor, runDoctor } from "./doctor.js";
import { closeSandbox } from "../sandbox/runtime.js";
import { closeMcp } from "../mcp/session.js";
import { formatMcp, listMcp } from "./mcp.js";
import { installCtrlC } from "./interrupt.js";
import { formatModels, listModels, ModelServerError, startCommands } from "./models.js";
import {
  addServerOptions,
  checkSettingsFiles,
  resolvedServer,
  serverSettings,
  type ServerFlags,
} from "./server-options.js";
import { runSession, UsageError, type RunOutcome } from "./session.js";
import { diffCommand, undoCommand } from "./undo.js";
import { statsCommand } from "./stats.js";
import { evalCommand } from "./eval.js";
import { EvalServerError } from "../eval/run.js";
import { APPROVAL_MODE_HELP, APPROVAL_MODES, type ApprovalMode } from "../tools/permissions.js";
import { UndoError } from "../undo/undo.js";

const VERSION = "0.1.0";

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number ≥ 1");
  return n;
};

const retryCount = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 10)
    throw new InvalidArgumentError("expected a whole number from 0 to 10");
  return n;
};

/** --context-window: the num_ctx keel asks for; the model's own context caps it. */
const contextWindowOption = () =>
  new Option(
    "--context-window <tokens>",
    "context window keel asks the server for (num_ctx); never more than the model's own context, which caps it",
  )
    .argParser((v) => {
      const n = positiveInt(v);
      if (n < 1024) throw new InvalidArgumentError("expected at least 1024 tokens");
      return n;
    })
    .default(undefined, String(settingDefault("contextWindow")));

/** Commander's collector of a repeatable option. */
const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

interface RunFlags extends ServerFlags {
  workspace: string;
  thread?: string;
  checkpoints?: string;
  maxTurns?: number;
  maxToolCalls?: number;
  retries?: number;
  toolMode?: "auto" | "native" | "prompt";
  think?: "auto" | "on" | "off" | "low" | "medium" | "high";
  contextWindow?: number;
  yes?: boolean;
  approval?: ApprovalMode;
  check?: string;
  allowRead?: string[];
  allowWrite?: string[];
  allowHost?: string[];
  runCommandsUnsandboxed?: boolean;
  json?: boolean;
}

/** Prints the outcome: a report for people, or one JSON object as the last stdout line. */
export function printOutcome(o: RunOutcome, json: boolean | undefined): void {
  const { exitCode, ...fields } = o;
  if (json) {
    process.stdout.write(`${JSON.stringify(fields)}\n`);
    return;
  }
  const color = o.status === "done" ? pc.green : o.status === "error" ? pc.red : pc.yellow;
  const out = [
    "",
    `${color(pc.bold(o.status.toUpperCase()))}  ${pc.dim(`thread ${o.thread_id} · intent ${o.intent ?? "?"} · ${o.turns} turns · ${o.tool_calls.length} tool calls`)}`,
    o.files_written.length ? `files written: ${o.files_written.join(", ")}` : "",
    o.error ? pc.red(o.error) : "",
    o.summary,
    o.status !== "done" && o.status !== "error"
      ? pc.dim(`resume or follow up with: keel run --thread ${o.thread_id} "<request>"`)
      : "",
    o.status === "error"
      ? pc.dim(`after fixing it, resume with: keel run --thread ${o.thread_id}`)
      : "",
  ].filter(Boolean);
  process.stdout.write(`${out.join("\n")}\n`);
}

async function runCommand(request: string | undefined, flags: RunFlags): Promise<number> {
  const workspace = path.resolve(flags.workspace);
  if (!existsSync(workspace) || !statSync(workspace).isDirectory()) {
    throw new UsageError(
      `workspace ${workspace} is not an existing folder; create it or pass --workspace <dir>`,
    );
  }
  checkSettingsFiles(workspace);
  const env = readEnv();
  const interactive = !flags.json && Boolean(process.stdin.isTTY) && !env.ci;
  const rl = interactive
    ? createInterface({ input: process.stdin, output: process.stderr })
    : undefined;
  const stop = installCtrlC((line) => process.stderr.write(`\n${line}\n`));
  const log = (line: string) => (flags.json ? process.stderr : process.stdout).write(`${line}\n`);
  try {
    const outcome = await runSession({
      request,
      threadId: flags.thread,
      checkpoints: flags.checkpoints ?? defaultCheckpoints(workspace),
      settings: {
        workspace,
        ...serverSettings(flags),
        ...(flags.maxTurns ? { maxTurns: flags.maxTurns } : {}),
        ...(flags.maxToolCalls ? { maxToolCalls: flags.maxToolCalls } : {}),
        ...(flags.retries !== undefined ? { retries: flags.retries } : {}),
        ...(flags.toolMode ? { toolMode: flags.toolMode } : {}),
        ...(flags.think ? { think: flags.think } : {}),
        ...(flags.contextWindow ? { contextWindow: flags.contextWindow } : {}),
        ...(flags.yes ? { autoApprove: true } : {}),
        ...(flags.approval ? { approval: flags.approval } : {}),
        ...(flags.check ? { checkCommand: flags.check } : {}),
        ...(flags.allowRead ? { allowRead: flags.allowRead.map((p) => path.resolve(p)) } : {}),
        ...(flags.allowWrite ? { allowWrite: flags.allowWrite.map((p) => path.resolve(p)) } : {}),
        ...(flags.allowHost ? { allowHosts: flags.allowHost } : {}),
        ...(flags.runCommandsUnsandboxed ? { runCommandsUnsandboxed: true } : {}),
      },
      log,
      ask: rl ? (q) => rl.question(`${pc.cyan("?")} ${q}\n> `) : undefined,
      signal: stop.signal,
      control: stop.control,
    });
    printOutcome(outcome, flags.json);
    return outcome.exitCode;
  } finally {
    stop.dispose();
    rl?.close();
  }
}

function program(): Command {
  const cli = new Command("keel")
    .description(
      "Dependable tool-calling coding agents on local models (Ollama first), built on LangGraph.",
    )
    .version(VERSION)
    .showHelpAfterError("(run keel --help for usage)")
    .exitOverride();

  const run = cli
    .command("run")
    .description("Run the coder agent on a request in a workspace (or resume a thread)")
    .argument("[request]", 'what to do, e.g. "Build a REST API endpoint GET /users"')
    .option(
      "-w, --workspace <dir>",
      "folder the agent works in; every path is confined to it",
      ".",
    );
  addServerOptions(run, `model as the server lists it (default: $KEEL_MODEL or ${DEFAULT_MODEL})`)
    .option("-t, --thread <id>", "thread id: an existing thread resumes, a new one starts")
    .option(
      "--checkpoints <url>",
      "memory | sqlite:PATH | postgres://… (default: sqlite:<workspace>/.keel/keel.db)",
    )
    .addOption(
      new Option("--max-turns <n>", "most model turns")
        .argParser(positiveInt)
        .default(undefined, String(settingDefault("maxTurns"))),
    )
    .addOption(
      new Option("--max-tool-calls <n>", "most tool calls")
        .argParser(positiveInt)
        .default(undefined, String(settingDefault("maxToolCalls"))),
    )
    .addOption(
      new Option("--retries <n>", "retries of a failed model request (503, dropped connection)")
        .argParser(retryCount)
        .default(undefined, String(settingDefault("retries"))),
    )
    .addOption(
      new Option(
        "--tool-mode <mode>",
        "how tools reach the model (auto: native iff Ollama lists the tools capability)",
      )
        .choices(ContextSchema.shape.toolMode.unwrap().options)
        .default(undefined, String(settingDefault("toolMode"))),
    )
    .addOption(
      new Option(
        "--think <mode>",
        "thinking, for models with the thinking capability: on, off, or a level (low|medium|high) for models that take levels (gpt-oss); auto: the server's default (on)",
      )
        .choices(ContextSchema.shape.think.unwrap().options)
        .default(undefined, String(settingDefault("think"))),
    )
    .addOption(contextWindowOption())
    .addOption(
      new Option(
        "--approval <mode>",
        `what runs without asking: ${APPROVAL_MODES.map((m) => `${m} (${APPROVAL_MODE_HELP[m]})`).join("; ")}. Rules in the settings (allowRules, askRules, denyRules) refine it; deny rules win in every mode`,
      )
        .choices(APPROVAL_MODES)
        .default(undefined, String(settingDefault("approval"))),
    )
    .option(
      "-y, --yes",
      "answer yes to every approval question (commands beyond the workspace, --approval ask|edits); deny rules and running unsandboxed still refuse",
    )
    .option(
      "--check <command>",
      "run this command (sandboxed) after each file change and show its output to the model, e.g. 'npx tsc --noEmit' or 'python -m py_compile {file}'",
    )
    .option(
      "--allow-read <path>",
      "sandbox: let commands read this folder or file outside the workspace (repeatable)",
      collect,
    )
    .option(
      "--allow-write <path>",
      "sandbox: let commands write this folder outside the workspace (repeatable)",
      collect,
    )
    .option(
      "--allow-host <host>",
      "sandbox: let commands reach this host, e.g. api.github.com or *.example.com (repeatable)",
      collect,
    )
    .option(
      "--run-commands-unsandboxed",
      "run commands WITHOUT the OS sandbox (they can read and write all your files); for machines where `keel doctor` says the sandbox cannot run",
    )
    .option(
      "--json",
      "print one JSON object as the last line of stdout; the timeline goes to stderr",
    )
    .addHelpText(
      "after",
      `
Exit codes: 0 done · 1 not completed (gave up / needs a human) · 2 usage error · 3 model server failed · 4 checkpoint database unreachable · 130 Ctrl-C (resumable)

Examples:
  keel run "Build a REST API endpoint GET /users in src/api/users.js" -w ./my-app
  keel run --thread run-2026-11-22-ab12cd          # resume after a crash, Ctrl-C or keel undo
  keel run "add input validation" --approval edits  # ask before each command
  keel diff && keel undo                           # what the agent changed; put it back
  keel run "explain how src/cli works" --json | tail -n 1 | jq .status`,
    )
    .action(async (request: string | undefined, flags: RunFlags) => {
      process.exitCode = await runCommand(request, flags);
    });

  const analyze = cli
    .command("analyze")
    .alias("analyse")
    .description(
      "Analyse a codebase: every file, then every folder, then the whole; resumable, incremental. Without a model: the structural report",
    )
    .argument("[dir]", "folder to analyse", ".")
    .option(
      "-t, --thread <id>",
      "thread id (default: derived from the folder, so the same command resumes)",
    )
    .option(
      "-o, --out <file>",
      "Markdown report path (default <dir>/.keel/report.md; JSON beside it)",
    )
    .addOption(
      new Option("-c, --concurrency <n>", "units analysed at once")
        .argParser(positiveInt)
        .default(undefined, "2"),
    )
    .addOption(
      new Option("--depth <depth>", "quick: the start of each file; deep: all of it")
        .choices(["quick", "deep"])
        .default("deep"),
    );
  addServerOptions(
    analyze,
    `model as the server lists it, or "none" for the structural report (default: $KEEL_MODEL or ${DEFAULT_MODEL})`,
  )
    .option("--checkpoints <url>", "memory | sqlite:PATH (default: sqlite:<dir>/.keel/keel.db)")
    .addOption(
      new Option("--retries <n>", "retries of a failed model request").argParser(retryCount),
    )
    .addOption(contextWindowOption())
    .option("--json", "progress as JSON lines on stderr; one JSON object as the last stdout line")
    .action(
      async (
        dir: string,
        flags: ServerFlags & {
          thread?: string;
          out?: string;
          concurrency?: number;
          depth: "quick" | "deep";
          checkpoints?: string;
          retries?: number;
          contextWindow?: number;
          json?: boolean;
        },
      ) => {
        checkSettingsFiles(path.resolve(dir));
        const stop = installCtrlC((line) => process.stderr.write(`\n${line}\n`));
        try {
          const outcome = await runAnalyze({
            dir,
            threadId: flags.thread,
            checkpoints: flags.checkpoints,
            json: flags.json,
            control: stop.control,
            signal: stop.signal,
            settings: {
              ...serverSettings(flags),
              depth: flags.depth,
              ...(flags.out ? { out: path.resolve(flags.out) } : {}),
              ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
              ...(flags.retries !== undefined ? { retries: flags.retries } : {}),
              ...(flags.contextWindow ? { contextWindow: flags.contextWindow } : {}),
            },
          });
          const { exitCode, ...fields } = outcome;
          process.stdout.write(
            `${flags.json ? JSON.stringify(fields) : formatAnalyzeOutcome(outcome)}\n`,
          );
          process.exitCode = exitCode;
        } finally {
          stop.dispose();
        }
      },
    );

  const models = cli
    .command("models")
    .description(
      "Show each model on the server: capabilities, context, the tool mode keel uses, and the text format it reads",
    );
  addServerOptions(models, false)
    .option("--json", "print the table as JSON")
    .addHelpText(
      "after",
      `\nStarting an OpenAI-compatible server with tool calling:\n${startCommands()}`,
    )
    .action(async (flags: ServerFlags & { json?: boolean }) => {
      const server = resolvedServer(flags);
      const url = server.url;
      try {
        const rows = await listModels(server);
        process.stdout.write(
          `${flags.json ? JSON.stringify(rows) : formatModels(rows, url, server.provider)}\n`,
        );
      } catch (err) {
        if (!(err instanceof ModelServerError)) throw err;
        process.stderr.write(`keel: ${err.message}\n`);
        process.exitCode = 3;
      }
    });

  cli
    .command("mcp")
    .description(
      "List the MCP servers a run here would use (.mcp.json and settings), their tools, and what the tools cost in tokens",
    )
    .option("-w, --workspace <dir>", "the workspace whose .mcp.json and settings to read", ".")
    .option("--json", "print the report as JSON")
    .action(async (flags: { workspace: string; json?: boolean }) => {
      const workspace = path.resolve(flags.workspace);
      checkSettingsFiles(workspace);
      const report = await listMcp(workspace);
      process.stdout.write(
        `${flags.json ? JSON.stringify({ ...report, tools: undefined }) : formatMcp(report)}\n`,
      );
      process.exitCode = report.failures.length ? 1 : 0;
    });

  const doctor = cli
    .command("doctor")
    .description(
      "Check this machine: the OS sandbox for commands (with a real sandboxed command), what commands may read, and the model server",
    );
  addServerOptions(doctor, false)
    .option("--json", "print the report as JSON")
    .action(async (flags: ServerFlags & { json?: boolean }) => {
      const report = await runDoctor(resolvedServer(flags));
      process.stdout.write(`${flags.json ? JSON.stringify(report) : formatDoctor(report)}\n`);
      process.exitCode = report.sandbox.ok ? 0 : 1;
    });

  cli
    .addCommand(undoCommand())
    .addCommand(diffCommand())
    .addCommand(statsCommand())
    .addCommand(evalCommand());

  cli
    .command("demo")
    .description(
      "Run the real graph against a SCRIPTED model (no Ollama needed) that makes the classic agent mistakes and recovers",
    )
    .option("--json", "print one JSON object as the last line of stdout")
    .option("-w, --workspace <dir>", "folder to build in (default: a new temporary folder)")
    .action(async (flags: { json?: boolean; workspace?: string }) => {
      const outcome = await runDemo(flags);
      printOutcome(outcome, flags.json);
      process.exitCode = outcome.exitCode;
    });
  return cli;
}

async function main(): Promise<void> {
  try {
    await program().parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander already printed the message (or the help); only the exit code is ours.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    if (err instanceof EvalServerError) {
      process.stderr.write(`keel: ${err.message}\n`);
      process.exitCode = 3;
      return;
    }
    if (err instanceof PersistenceError) {
      process.stderr.write(`keel: ${err.message}\n`);
      process.exitCode = 4;
      return;
    }
    if (err instanceof ZodError) {
      const issues = err.issues.map((i) => `${i.path.join(".") || "settings"}: ${i.message}`);
      process.stderr.write(`keel: invalid settings: ${issues.join("; ")}\n`);
      process.exitCode = 2;
      return;
    }
    if (
      err instanceof UsageError ||
      err instanceof UndoError ||
      err instanceof CheckpointUrlError ||
      err instanceof SettingsFileError ||
      err instanceof McpConfigError
    ) {
      process.stderr.write(`keel: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`keel: unexpected failure: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  } finally {
    // MCP servers keel started, and the sandbox's proxies, would keep the process alive.
    await closeMcp();
    await closeSandbox();
  }
}

await main();
