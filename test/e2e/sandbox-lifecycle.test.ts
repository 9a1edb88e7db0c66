/**
 * A command never sees keel's own sandbox lifecycle: commands started just as the idle shutdown
 * runs (and while it is stopping the proxies) run normally — never "Linux HTTP bridge socket does
 * not exist". Real sandbox, real commands.
 */
import { spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { NO_GRANTS } from "../../src/sandbox/policy.js";
import { closeSandbox, prepareCommand, probeSandbox } from "../../src/sandbox/runtime.js";
import { tempWorkspace } from "../support/harness.js";

/** The idle delay after which runtime.ts stops the proxies (IDLE_MS there). */
const IDLE_MS = 1000;

async function sandboxed(ws: string, command: string) {
  const prepared = await prepareCommand(command, {
    workspace: ws,
    grants: NO_GRANTS,
    approved: false,
    sandboxed: true,
  });
  const [bin, ...args] = prepared.argv;
  const child = spawn(bin, args, { cwd: ws, env: prepared.env });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  prepared.finish(output);
  return { code, output };
}

describe("the sandbox's idle shutdown", () => {
  it("never reaches a command started around it", async () => {
    expect((await probeSandbox()).ok).toBe(true);
    const ws = tempWorkspace();
    const results: Array<{ code: number | null; output: string }> = [];
    // Around the idle deadline: just before, at, and just after it.
    for (const offset of [-40, -10, 0, 5, 15, 30, 60, -25, 10, 45]) {
      results.push(await sandboxed(ws, "echo ok"));
      await sleep(IDLE_MS + offset);
    }
    // A stop asked for at the very moment commands start, and while a stop is under way.
    for (let i = 0; i < 5; i++) {
      const stopping = closeSandbox();
      results.push(...(await Promise.all([sandboxed(ws, "echo ok"), sandboxed(ws, "echo ok")])));
      await stopping;
      await closeSandbox();
      results.push(await sandboxed(ws, "echo ok"));
    }
    for (const r of results) {
      expect(r.output).not.toMatch(/bridge socket|reinitializ/i);
      expect(r.code, r.output).toBe(0);
      expect(r.output).toMatch(/(^|\n)ok\n$/);
    }
    expect(results.length).toBe(25);
  }, 60_000);
});
