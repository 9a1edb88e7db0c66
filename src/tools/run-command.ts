import { spawn } from "node:child_process";
import { z } from "zod";
import { checkCommand } from "./command-policy.js";
import { defineTool, fail, ok } from "./types.js";

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
    "Run a shell command in the workspace (tests, builds, git status). Not for writing files: use write_file.",
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
  async run({ command, timeout_ms }, ctx) {
    const check = checkCommand(command, ctx.workspace);
    if (check.verdict === "refuse") return fail("refused", `run_command refused: ${check.reason}`);
    if (check.verdict === "approve") {
      const approved =
        ctx.approve?.({ tool: "run_command", command, reason: check.reason }) ?? false;
      if (!approved) {
        return fail(
          "needs_approval",
          `run_command refused: ${check.reason}, and no one approved it. (The user can allow such commands by running keel with --yes.) Do the task without it, or finish and explain what command is needed.`,
        );
      }
    }
    const timeout = timeout_ms ?? ctx.commandTimeoutMs;
    return new Promise((resolve) => {
      const child = spawn("bash", ["-c", command], {
        cwd: ctx.workspace,
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
      const onAbort = () => killGroup();
      ctx.signal?.addEventListener("abort", onAbort, { once: true });
      child.on("error", (e) => {
        clearTimeout(timer);
        resolve(fail("failed", `run_command: could not start bash: ${e.message}`));
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        ctx.signal?.removeEventListener("abort", onAbort);
        const output = out.text().trimEnd() || "(no output)";
        if (timedOut) {
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
  },
});
