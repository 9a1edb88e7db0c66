import { spawn } from "node:child_process";
import { z } from "zod";
import { NO_GRANTS } from "../sandbox/policy.js";
import { prepareCommand, probeSandbox, type PreparedCommand } from "../sandbox/runtime.js";
import { checkCommand } from "./command-policy.js";
import { defineTool, fail, ok, type ToolContext, type ToolResult } from "./types.js";

/**
 * Collects a command's output in bounded memory: the first and the last `limit / 2` characters,
 * with a note of how much was cut between them.
 */
export class OutputTail {
  private head = "";
  private tail = "";
  private total = 0;
  constructor(private readonly limit: number) {}

  push(chunk: string): void {
    this.total += chunk.length;
    const half = Math.floor(this.limit / 2);
    if (this.head.length < half) {
      const take = half - this.head.length;
      this.head += chunk.slice(0, take);
      chunk = chunk.slice(take);
    }
    this.tail = (this.tail + chunk).slice(-half);
  }

  text(): string {
    const cut = this.total - this.head.length - this.tail.length;
    return cut > 0
      ? `${this.head}\n[... ${cut} characters cut ...]\n${this.tail}`
      : this.head + this.tail;
  }
}

export const runCommandTool = defineTool({
  name: "run_command",
  description:
    "Run a shell command in the workspace (tests, builds, git status). Not for writing files: use write_file. Commands run in a sandbox that sees only the workspace and the system's folders.",
  toolClass: "command",
  schema: z.object({
    command: z.string().describe("The shell command, e.g. npm test"),
    timeout_ms: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Time limit in milliseconds (default 120000)"),
  }),
  ownLimitMs: ({ timeout_ms }, ctx) => timeout_ms ?? ctx.commandTimeoutMs,
  async run({ command, timeout_ms }, ctx) {
    const isolation = ctx.isolation ?? { grants: NO_GRANTS, unsandboxed: false };
    // Paths the user granted are not "outside" for the cheap first check; the sandbox holds the rest.
    const { allowRead, allowWrite } = isolation.grants;
    const check = checkCommand(command, ctx.workspace, [...allowWrite, ...allowRead]);
    if (check.verdict === "refuse") return fail("refused", `run_command refused: ${check.reason}`);
    const sandbox = isolation.unsandboxed ? undefined : await probeSandbox();
    // Without the OS sandbox (and no opt-out) every command needs a person; --yes is not enough.
    const unsandboxed = sandbox !== undefined && !sandbox.ok;
    let approved = false;
    if (check.verdict === "approve" || unsandboxed) {
      const reason = [
        check.verdict === "approve" ? check.reason : undefined,
        unsandboxed
          ? `keel cannot sandbox commands on this machine (${sandbox.reason})`
          : undefined,
      ]
        .filter(Boolean)
        .join("; and ");
      // Already approved at the gate (a rule, or a person asked by the approval mode) covers what
      // --yes could approve; running unsandboxed is asked about on its own.
      approved =
        (ctx.approved === true && !unsandboxed) ||
        (ctx.approve?.({
          tool: "run_command",
          command,
          reason,
          ...(unsandboxed && { unsandboxed }),
        }) ??
          false);
      if (!approved) return fail("needs_approval", refusal(reason, unsandboxed));
    }
    const prepared = await prepareCommand(command, {
      workspace: ctx.workspace,
      grants: isolation.grants,
      approved,
      sandboxed: sandbox?.ok === true,
      gitWritable: ctx.gitWritable === true,
    });
    return spawnCommand(prepared, timeout_ms ?? ctx.commandTimeoutMs, ctx);
  },
});

function refusal(reason: string, unsandboxed: boolean): string {
  const allow = unsandboxed
    ? "The user can install the sandbox's helpers (see `keel doctor`) or run keel with --run-commands-unsandboxed."
    : "The user can allow such commands by running keel with --yes.";
  return `run_command refused: ${reason}, and no one approved it. (${allow}) Do the task without it, or finish and explain what command is needed.`;
}

/** What the model is told of a command keel stopped because keel itself was stopped. */
export const STOPPED_WITH_KEEL =
  "run_command: stopped before it finished, when the user stopped keel (Ctrl-C or SIGTERM); it may have run partly. Check its effect (list or read the files it touches) before running it again.";

/**
 * Runs a prepared command in its own process group, bounded in time and output; stopped with
 * keel (the run's signal).
 */
function spawnCommand(
  prepared: PreparedCommand,
  timeout: number,
  ctx: ToolContext,
): Promise<ToolResult> {
  return new Promise((resolve) => {
    const [program, ...args] = prepared.argv;
    const child = spawn(program, args, {
      cwd: ctx.workspace,
      env: prepared.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (child.pid) ctx.onSpawn?.(child.pid);
    const out = new OutputTail(ctx.outputLimit);
    let timedOut = false;
    const onData = (d: Buffer) => out.push(d.toString("utf8"));
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeout);
    let stopped = false;
    const onAbort = () => {
      stopped = true;
      killGroup();
    };
    ctx.signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (e) => {
      clearTimeout(timer);
      prepared.finish("");
      resolve(fail("failed", `run_command: could not start bash: ${e.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      ctx.signal?.removeEventListener("abort", onAbort);
      const seen = out.text().trimEnd();
      const text = prepared.shown?.(seen) ?? seen;
      const output = [text || "(no output)", prepared.finish(seen)].filter(Boolean).join("\n");
      if (stopped) {
        resolve(fail("interrupted", `${STOPPED_WITH_KEEL}\nOutput so far:\n${output}`));
      } else if (timedOut) {
        resolve(
          fail(
            "timeout",
            `run_command: timed out after ${timeout} ms and was killed. Output so far:\n${output}`,
          ),
        );
      } else if (code === 0) {
        resolve(ok(`exit code 0\n${output}`));
      } else {
        resolve(fail("failed", `run_command: exit code ${code ?? signal}\n${output}`));
      }
    });
  });
}
