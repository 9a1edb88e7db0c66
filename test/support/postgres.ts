/**
 * vitest global setup: a throwaway PostgreSQL cluster on loopback for the Postgres tests — initdb
 * in a temp folder, a free port, trust auth, stopped and deleted afterwards. Needs Debian's
 * `postgresql` package (`.ci/run` installs it). Tests read the URL with `inject("pgUrl")`.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

function pgBin(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions)
    if (existsSync(path.join(root, v, "bin/initdb"))) return path.join(root, v, "bin");
  throw new Error(
    "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb). Install them: apt-get install -y postgresql",
  );
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts the cluster and provides its URL; `serverOptions`: more `-c name=value` settings (the
 * bench preloads pg_stat_statements to count the queue's statements).
 */
export default async function setup(
  project: TestProject,
  serverOptions: string[] = [],
): Promise<() => void> {
  const bin = pgBin();
  const dir = mkdtempSync(path.join(tmpdir(), "keel-pg-"));
  const data = path.join(dir, "data");
  // initdb refuses to run as root: run the server as the postgres user then.
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    execFileSync(asRoot ? "runuser" : cmd, asRoot ? ["-u", "postgres", "--", cmd, ...args] : args, {
      stdio: "pipe",
    });
  if (asRoot)
    chownSync(
      dir,
      Number(execFileSync("id", ["-u", "postgres"]).toString().trim()),
      Number(execFileSync("id", ["-g", "postgres"]).toString().trim()),
    );
  const port = await freePort();
  run(path.join(bin, "initdb"), [
    "-D",
    data,
    "-U",
    "keel",
    "--auth=trust",
    "-E",
    "UTF8",
    "--no-sync",
  ]);
  run(path.join(bin, "pg_ctl"), [
    "-D",
    data,
    "-l",
    path.join(dir, "log"),
    "-w",
    "-o",
    [`-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, ...serverOptions].join(
      " -c ",
    ),
    "start",
  ]);
  run(path.join(bin, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "keel", "keel"]);
  project.provide("pgUrl", `postgres://keel@127.0.0.1:${port}/keel`);
  return () => {
    try {
      run(path.join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "stop"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
