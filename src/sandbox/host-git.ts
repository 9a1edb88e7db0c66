/**
 * keel's own git, run outside the sandbox on a repository a command may have touched: after
 * aftercare has cleaned its config, never waiting past a deadline, without optional locks (a look
 * must not change the repository), in the C locale (output is parsed), and reading objects as they
 * are (a replace ref a command made must not hide what a checkout would write).
 */
import { spawnSync } from "node:child_process";

export interface GitRun {
  /** Its output when it exited 0. */
  stdout?: string;
  /** Cut off at the deadline (not: git missing, which is no one's wait). */
  timedOut?: true;
}

export function runGit(
  cwd: string,
  args: readonly string[],
  timeoutMs: number,
  options: { input?: string; env?: Record<string, string> } = {},
): GitRun {
  if (timeoutMs <= 0) return { timedOut: true };
  const r = spawnSync("git", args, {
    cwd,
    encoding: "utf8",
    timeout: timeoutMs,
    maxBuffer: 256 << 20,
    ...(options.input !== undefined ? { input: options.input } : {}),
    env: {
      ...process.env,
      GIT_OPTIONAL_LOCKS: "0",
      GIT_NO_REPLACE_OBJECTS: "1",
      LC_ALL: "C",
      ...options.env,
    },
  });
  const code = r.error && "code" in r.error ? r.error.code : undefined;
  const timedOut = r.signal !== null || code === "ETIMEDOUT";
  return {
    ...(r.status === 0 ? { stdout: r.stdout } : {}),
    ...(timedOut ? { timedOut: true as const } : {}),
  };
}
