import { spawn } from "node:child_process";
import { z } from "zod";
import { checkCommand } from "./command-policy.js";
import { defineTool, fail, ok } from "./types.js";

/** Keeps the head and the tail of long output, saying how much was cut. */
export function clip(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const half = Math.floor(limit / 2);
  return `${text.slice(0, half)}\n[... ${text.length - 2 * half} characters cut ...]\n${text.slice(-half)}`;
}

export const runCommandTool = defineTool({
  name: "run_command",
  description:
    "Run a shell command in the workspace (tests, builds, git status). Not for writing files: use write_file.",
  toolClass: "command",
  schema: z.object({
    command: z.string().describe("The shell command, e.g. npm test"),
    timeout_ms: z.number().int().positive().optional().describe("Time limit in milliseconds (default 120000)"),
  }),
  async run({ command, timeout_ms }, ctx) {
    const check = checkCommand(command, ctx.workspace);
    if (check.verdict === "refuse") return fail("refused", `run_command refused: ${check.reason}`);
    if (check.verdict === "approve") {
      const approved = ctx.approve?.({ tool: "run_command", command, reason: check.reason }) ?? false;
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
      let out = "";
      let timedOut = false;
      const onData = (d: Buffer) => {
        if (out.length < ctx.outputLimit * 4) out += d.toString("utf8");
      };
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
        const output = clip(out.trimEnd(), ctx.outputLimit) || "(no output)";
        if (timedOut) {
          resolve(fail("timeout", `run_command: timed out after ${timeout} ms and was killed. Output so far:\n${output}`));
        } else if (code === 0) {
          resolve(ok(`exit code 0\n${output}`));
        } else {
          resolve(fail("failed", `run_command: exit code ${code ?? signal}\n${output}`));
        }
      });
    });
  },
});
