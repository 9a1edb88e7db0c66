#!/usr/bin/env node
/** The keel command. Parses arguments, wires the session to the terminal, maps outcomes to exit codes. */
import { Command, CommanderError } from "commander";
import { ZodError } from "zod";
import { FileRefused } from "../files/door.js";
import { printable } from "../printable.js";
import { CheckpointUrlError } from "../persistence/checkpointer.js";
import { PersistenceError } from "../persistence/open.js";
import { ThreadBusyError } from "../persistence/thread-lock.js";
import { SettingsFileError } from "../run/settings-file.js";
import { McpConfigError } from "../mcp/config.js";
import { analyzeCommand } from "./analyze.js";
import { workerCommand } from "./worker.js";
import { runDemo } from "./demo.js";
import { formatDoctor, runDoctor } from "./doctor.js";
import { closeSandbox } from "../sandbox/runtime.js";
import { closeMcp } from "../mcp/session.js";
import { approveMcp, formatMcp, listMcp } from "./mcp.js";
import { CLOSED_PIPE_EXIT, stopRunsNow } from "./interrupt.js";
import { checkpointsOf, DEFAULT_STORE, workspaceFolder } from "./options.js";
import { formatModels, listModels, ModelServerError, startCommands } from "./models.js";
import { checkSettingsFiles, resolvedServer } from "./server-options.js";
import { addSettingFlags, flagSettings } from "./setting-flags.js";
import { ModelSettingsSchema, parseSettings } from "../run/settings.js";
import { UsageError } from "../session/session.js";
import { printOutcome, runCommandDef } from "./run.js";
import { diffCommand, undoCommand } from "./undo.js";
import { statsCommand } from "./stats.js";
import { evalCommand } from "./eval.js";
import { calibrateCommand } from "./calibrate.js";
import { EvalServerError } from "../eval/run.js";
import { NothingToUndoError, UndoError } from "../undo/undo.js";

const VERSION = "0.1.0";

function program(): Command {
  const cli = new Command("keel")
    .description(
      "Dependable tool-calling coding agents on local models (Ollama first), built on LangGraph.",
    )
    .version(VERSION)
    .showHelpAfterError("(run keel --help for usage)")
    .addHelpText(
      "after",
      `
Examples:
  keel demo                                   # the real graph with a scripted model: no server needed
  keel run "Add a --verbose flag to cli.py"   # the coder agent in this folder (Ollama, qwen3:8b)
  keel analyze . --json                       # a report on a codebase (structural without a model)
  keel doctor                                 # is the sandbox and the model server ready?
  keel <command> --help                       # each command's options and examples`,
    )
    .exitOverride();

  // Commands defined in their own modules take the program's settings (exit override, help after an error).
  const own = (cmd: Command) => cli.addCommand(cmd.copyInheritedSettings(cli));
  own(runCommandDef());
  own(analyzeCommand());
  own(workerCommand());

  addModels(cli);
  addMcp(cli);
  addDoctor(cli);
  for (const cmd of [
    undoCommand(),
    diffCommand(),
    statsCommand(),
    evalCommand(),
    calibrateCommand(),
  ])
    own(cmd);

  addDemo(cli);
  helpPointers(cli, "keel");
  return cli;
}

/** `keel models`: the models on the server and how keel would use each. */
function addModels(cli: Command): void {
  const models = cli
    .command("models")
    .description(
      "Show each model on the server: capabilities, context, the tool mode keel uses, and the text format it reads",
    );
  addSettingFlags(models, "models", ModelSettingsSchema)
    .option("--json", "print the table as JSON")
    .addHelpText(
      "after",
      `\nExamples:\n  keel models\n  keel models --provider openai --base-url http://127.0.0.1:8080/v1 --json\n\nStarting an OpenAI-compatible server with tool calling:\n${startCommands()}`,
    )
    .action(async (flags: { json?: boolean }) => {
      const server = resolvedServer(flagSettings(models));
      const url = server.url;
      try {
        const rows = await listModels(server);
        process.stdout.write(
          `${flags.json ? JSON.stringify(rows) : formatModels(rows, url, server.provider)}\n`,
        );
      } catch (err) {
        if (!(err instanceof ModelServerError)) throw err;
        process.stderr.write(`keel: ${printable(err.message)}\n`);
        process.exitCode = 3;
      }
    });
}

/** `keel mcp` and `keel mcp approve`: the MCP servers a run here would use. */
function addMcp(cli: Command): void {
  const mcp = cli
    .command("mcp")
    .description(
      "List the MCP servers a run here would use (.mcp.json and settings), their tools, and what the tools cost in tokens",
    )
    .option("-w, --workspace <dir>", "the workspace whose .mcp.json and settings to read", ".")
    .option("--json", "print the report as JSON")
    .addHelpText(
      "after",
      `
Examples:
  keel mcp                      # the servers, their tools and what they cost in tokens
  keel mcp approve              # ask about each .mcp.json server not approved yet`,
    )
    .action(async (flags: { workspace: string; json?: boolean }) => {
      const workspace = workspaceFolder(flags.workspace);
      checkSettingsFiles(workspace);
      const report = await listMcp(workspace);
      process.stdout.write(
        `${flags.json ? JSON.stringify({ ...report, tools: undefined }) : formatMcp(report)}\n`,
      );
      process.exitCode = report.failures.length ? 1 : 0;
    });
  mcp
    .command("approve [names...]")
    .description(
      "Show the workspace's .mcp.json servers not approved yet (or those named), and ask whether keel may start each; approvals are kept in your settings folder",
    )
    .option("-w, --workspace <dir>", "the workspace whose .mcp.json to read", ".")
    .action(async (names: string[], flags: { workspace: string }) => {
      // `-w` after the server names is parsed by `keel mcp` itself.
      const given = flags.workspace !== "." ? flags.workspace : (mcp.opts().workspace as string);
      const workspace = workspaceFolder(given);
      await approveMcp(workspace, names, (l) => process.stderr.write(`${l}\n`));
    });
}

/** `keel doctor`: is this machine ready (sandbox, model server, the path to the model)? */
function addDoctor(cli: Command): void {
  const doctor = cli
    .command("doctor")
    .description(
      "Check this machine: the OS sandbox for commands (with a real sandboxed command), what commands may read, the model server, and whether it has the model a run would ask for",
    );
  addSettingFlags(doctor, "doctor", ModelSettingsSchema)
    .option("-w, --workspace <dir>", "the workspace whose store keel remembers servers in", ".")
    .option(
      "--checkpoints <url>",
      `memory | sqlite:PATH | postgres://… (default: ${DEFAULT_STORE})`,
    )
    .option("--json", "print the report as JSON")
    .option("--no-canary", "do not check the path to the model with canary requests")
    .addHelpText(
      "after",
      `
With the model there, the path to it is checked with a canary: a prompt of the run's window
opening with a marker (does the server take all of it, by its own count?), a request with a tool
(llama-server without --jinja refuses it), two requests with one prefix (is the prompt cache on?),
Ollama's keep_alive, llama-server's slots. Each finding names the flag or setting that fixes it.

Exits 1 when commands cannot be sandboxed here (it says what to install).

Examples:
  keel doctor
  keel doctor --provider openai --base-url http://127.0.0.1:8080/v1 --context-window 8192`,
    )
    .action(
      async (flags: {
        json?: boolean;
        workspace: string;
        checkpoints?: string;
        canary: boolean;
      }) => {
        const workspace = workspaceFolder(flags.workspace);
        const given = flagSettings(doctor);
        const report = await runDoctor({
          ...resolvedServer(given, workspace),
          checkpoints: checkpointsOf(flags.checkpoints, workspace),
          window: parseSettings(ModelSettingsSchema, { context: { ...given, workspace } })
            .contextWindow,
          canary: flags.canary,
          settings: { ...given, workspace },
        });
        process.stdout.write(`${flags.json ? JSON.stringify(report) : formatDoctor(report)}\n`);
        process.exitCode = report.sandbox.ok ? 0 : 1;
      },
    );
}

/** `keel demo`: the real graph with a scripted model. */
function addDemo(cli: Command): void {
  cli
    .command("demo")
    .description(
      "Run the real graph against a SCRIPTED model (no Ollama needed) that makes the classic agent mistakes and recovers",
    )
    .option("--json", "print one JSON object as the last line of stdout")
    .option("-w, --workspace <dir>", "folder to build in (default: a new temporary folder)")
    .action(async (flags: { json?: boolean; workspace?: string }) => {
      const outcome = await runDemo(flags);
      printOutcome(outcome, flags.json, null); // its store is memory: nothing to resume
      process.exitCode = outcome.exitCode;
    });
}
/** A flag error points at the help of the command that has the flag. */
function helpPointers(cmd: Command, path: string): void {
  for (const sub of cmd.commands) {
    const name = `${path} ${sub.name()}`;
    sub.showHelpAfterError(`(run ${name} --help for usage)`);
    helpPointers(sub, name);
  }
}

/**
 * A reader of keel's output that went away (`keel … | head`): no stack trace. A run stops at once
 * (resumable), anything else ends; the exit code is the shell's for SIGPIPE.
 */
function onClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    if (!stopRunsNow(CLOSED_PIPE_EXIT)) process.exit(CLOSED_PIPE_EXIT);
  });
}

async function main(): Promise<void> {
  onClosedPipe(process.stdout);
  onClosedPipe(process.stderr);
  try {
    await program().parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander already printed the message (or the help); only the exit code is ours.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    if (err instanceof EvalServerError) {
      process.stderr.write(`keel: ${printable(err.message)}\n`);
      process.exitCode = 3;
      return;
    }
    if (err instanceof PersistenceError) {
      process.stderr.write(`keel: ${printable(err.message)}\n`);
      process.exitCode = 4;
      return;
    }
    if (err instanceof ZodError) {
      const issues = err.issues.map((i) => `${i.path.join(".") || "settings"}: ${i.message}`);
      process.stderr.write(`keel: invalid settings: ${issues.join("; ")}\n`);
      process.exitCode = 2;
      return;
    }
    if (err instanceof NothingToUndoError) {
      // Nothing was done (exit 1), but nothing was asked wrongly either.
      process.stderr.write(`keel: ${printable(err.message)}\n`);
      process.exitCode = 1;
      return;
    }
    if (
      err instanceof UsageError ||
      err instanceof UndoError ||
      err instanceof CheckpointUrlError ||
      err instanceof ThreadBusyError ||
      err instanceof SettingsFileError ||
      err instanceof McpConfigError ||
      err instanceof FileRefused
    ) {
      process.stderr.write(`keel: ${printable(err.message)}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(
      `keel: unexpected failure: ${printable((err as Error)?.stack ?? String(err))}\n`,
    );
    process.exitCode = 1;
  } finally {
    // MCP servers keel started, and the sandbox's proxies, would keep the process alive.
    await closeMcp();
    await closeSandbox();
  }
}

await main();
