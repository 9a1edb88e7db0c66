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

/**
 * The person's git identity in `cwd` (their config in every scope), as the variables git reads it
 * from: a git write a person approved commits as them, though the sandbox hides their global config
 * from the command. None where git does not know one.
 */
export function gitIdentity(cwd: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, names] of [
    ["user.name", ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"]],
    ["user.email", ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"]],
  ] as const) {
    const value = runGit(cwd, ["config", "--get", key], 5_000).stdout?.trim();
    if (value) for (const name of names) out[name] = value;
  }
  return out;
}
