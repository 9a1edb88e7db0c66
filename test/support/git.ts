/**
 * The person's own git, as tests run it after keel: no config of theirs that could hide a plant
 * (no global or system config), and an author for commits.
 */
import { execFileSync } from "node:child_process";

export const PERSON_GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Ann",
  GIT_AUTHOR_EMAIL: "ann@example.com",
  GIT_COMMITTER_NAME: "Ann",
  GIT_COMMITTER_EMAIL: "ann@example.com",
};

/** git in `cwd`, its output; throws when it fails. */
export const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", env: PERSON_GIT_ENV });
