/**
 * The optional check after a file change (`checkCommand`, e.g. `npx tsc --noEmit` or
 * `python -m py_compile {file}`): run like any command (sandboxed, under the deny rules), its
 * verdict and output appended to the change's result, so the model sees a broken edit at once.
 * The edit itself stands either way.
 */
import { quote } from "shell-quote";
import { runCommandTool } from "./run-command.js";
import type { ToolContext, ToolResult } from "./types.js";

/** The command for the changed files: `{file}` becomes the (quoted) paths. */
export const checkFor = (command: string, files: readonly string[]) =>
  command.replaceAll("{file}", quote([...files]));

/** Whether the check may run, and whether what run_command declared of it was allowed. */
export type CheckVerdict = { run: true; approved: boolean } | { run: false; why: string };

/**
 * `result` with the check's verdict added. `allowedFor` says whether the run's rules let the check
 * run without asking (otherwise it is skipped, and the result says so).
 */
export async function withCheck(
  result: ToolResult,
  command: string,
  ctx: ToolContext,
  allowedFor: (cmd: string) => Promise<CheckVerdict>,
): Promise<ToolResult> {
  if (!result.ok || !result.filesWritten?.length) return result;
  const cmd = checkFor(command, result.filesWritten);
  const allowed = await allowedFor(cmd);
  if (!allowed.run)
    return { ...result, output: `${result.output}\n\ncheck \`${cmd}\` not run: ${allowed.why}` };
  const check = await runCommandTool.run({ command: cmd }, { ...ctx, approved: allowed.approved });
  const verdict = check.ok
    ? `check \`${cmd}\` passed`
    : `check \`${cmd}\` FAILED; the change was made, fix what it reports:\n${check.message.replace(/^run_command: /, "")}`;
  const output = check.ok ? check.output.replace(/^exit code 0\n/, "").trim() : "";
  return {
    ...result,
    output: `${result.output}\n\n${verdict}${output && output !== "(no output)" ? `\n${output}` : ""}`,
    ...(check.ok ? {} : { checkFailed: true as const }),
  };
}
