/** `keel run`: the coder agent on a request, or a thread resumed; the outcome printed for people or as JSON. */
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline/promises";
import { Command, Option } from "commander";
import pc from "picocolors";
import { ContextSchema, settingDefault } from "../agent/context.js";
import { readEnv } from "../env.js";
import type { ThinkSetting, ToolModeSetting } from "../models/capabilities.js";
import { defaultCheckpoints } from "../persistence/checkpointer.js";
import { DEFAULT_MODEL } from "../run/settings.js";
import { APPROVAL_MODE_HELP, APPROVAL_MODES, type ApprovalMode } from "../tools/permissions.js";
import { installCtrlC } from "./interrupt.js";
import { collect, contextWindowOption, positiveInt, retryCount } from "./options.js";
import {
  addServerOptions,
  checkSettingsFiles,
  serverSettings,
  type ServerFlags,
} from "./server-options.js";
import { runSession, UsageError, type RunOutcome } from "../session/session.js";

interface RunFlags extends ServerFlags {
  workspace: string;
  thread?: string;
  checkpoints?: string;
  maxTurns?: number;
  maxToolCalls?: number;
  retries?: number;
  toolMode?: ToolModeSetting;
  think?: ThinkSetting;
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
    `${color(pc.bold(o.status.toUpperCase()))}  ${pc.dim(`thread ${o.thread_id} · intent ${o.intent ?? "?"}${o.intent_source ? ` (${o.intent_source})` : ""} · ${o.turns} turns · ${o.tool_calls.length} tool calls`)}`,
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

export function runCommandDef(): Command {
  const run = new Command("run")
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
  return run;
}
