/**
 * Postgres for more than one machine: a thread started by one process is resumed by another; two
 * processes run different threads at once on one database; the analyst's findings survive.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import type { ChatView, FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { analystScript } from "../../src/testing/script.js";
import { runKeel, whenExists } from "../support/cli.js";
import {
  call,
  calls,
  keelScript,
  fakeOllamaPerTest,
  slowStep,
  tempWorkspace,
} from "../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

/** A fresh database per test, so tests never see each other's threads. */
async function freshDb(name: string): Promise<string> {
  const base = inject("pgUrl");
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  const db = `${name}_${process.pid}_${Date.now()}`.toLowerCase();
  await client.query(`CREATE DATABASE ${db}`);
  await client.end();
  return base.replace(/\/keel$/, `/${db}`);
}

const parts = (n: number) =>
  keelScript((req: ChatView) =>
    req.turn < n
      ? calls(
          call("run_command", {
            command: `node -e "require('fs').appendFileSync('effects.log', 'step${req.turn}\\n')"`,
          }),
          call("write_file", { path: `part${req.turn}.txt`, content: `part ${req.turn}\n` }),
        )
      : { content: `Wrote ${n} parts.` },
  );

describe("postgres checkpoints", () => {
  it("a thread started by one process is resumed by another", async () => {
    const url = await freshDb("resume");
    fake = await startFake({ script: parts(3) });
    const ws = tempWorkspace();
    const args = [
      "run",
      "Create the parts",
      "-w",
      ws,
      "--ollama-url",
      fake.url,
      "--checkpoints",
      url,
      "--thread",
      "shared",
      "--json",
    ];
    const first = await runKeel(args, {
      onSpawn: (child) =>
        fake!.onChat((req) => {
          if (!req.structured && req.turn === 2) {
            fake!.inject({ fault: "hang" });
            child.kill("SIGKILL");
          }
        }),
    });
    expect(first.signal).toBe("SIGKILL");
    fake.onChat(undefined);
    const second = await runKeel(args);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain("resuming thread shared");
    expect(readFileSync(path.join(ws, "effects.log"), "utf8")).toBe("step0\nstep1\nstep2\n");
  });

  it("two processes run different threads at once on one database without interference", async () => {
    const url = await freshDb("parallel");
    fake = await startFake({ script: parts(4) });
    const [a, b] = [tempWorkspace(), tempWorkspace()];
    const [ra, rb] = await Promise.all(
      [a, b].map((ws, i) =>
        runKeel([
          "run",
          `Create the parts ${i}`,
          "-w",
          ws,
          "--ollama-url",
          fake!.url,
          "--checkpoints",
          url,
          "--thread",
          `t${i}`,
          "--json",
        ]),
      ),
    );
    expect(ra!.json).toMatchObject({ status: "done", thread_id: "t0" });
    expect(rb!.json).toMatchObject({ status: "done", thread_id: "t1" });
    for (const ws of [a, b])
      expect(readFileSync(path.join(ws, "effects.log"), "utf8")).toBe(
        "step0\nstep1\nstep2\nstep3\n",
      );
    // Each thread holds only its own conversation.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const threads = await client.query(
      "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id",
    );
    await client.end();
    expect(threads.rows.map((r: { thread_id: string }) => r.thread_id)).toEqual(["t0", "t1"]);
    // keel stats reads the same database: two runs, 4 commands and 4 writes each, and their ledger
    const stats = await runKeel(["stats", "--checkpoints", url, "--json"]);
    expect(stats.code).toBe(0);
    const s = JSON.parse(stats.stdout) as {
      runs: number;
      tools: Array<{ tool: string; calls: number }>;
    };
    expect(s.runs).toBe(2);
    expect(s.tools.map((t) => [t.tool, t.calls])).toEqual([
      ["run_command", 8],
      ["write_file", 8],
    ]);
  });

  it("a second keel on a running thread, from another workspace on the same database, is refused, exit 2; the first runs every side effect once", async () => {
    const url = await freshDb("busy");
    fake = await startFake({ script: slowStep });
    // two workspaces: nothing shared but the database, as on two machines
    const [wsA, wsB] = [tempWorkspace(), tempWorkspace()];
    const log = path.join(wsA, "effects.log");
    const args = (ws: string) => [
      "run",
      "Run the slow step",
      "-w",
      ws,
      "--ollama-url",
      fake!.url,
      "--checkpoints",
      url,
      "-t",
      "shared",
    ];
    let second: ReturnType<typeof runKeel> | undefined;
    const first = await runKeel([...args(wsA), "--json"], {
      onSpawn: whenExists(log, () => {
        second = runKeel(args(wsB));
      }),
    });
    const refused = await second!;
    expect(refused.code, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(
      /^keel: thread shared is running in another keel \(keel pid \d+ on /m,
    );
    expect(first.json).toMatchObject({ status: "done" });
    expect(readFileSync(log, "utf8")).toBe("start\nend\n");
    expect(existsSync(path.join(wsB, "effects.log"))).toBe(false);
  });

  it("bad URLs and unreachable databases are named, exit 4", async () => {
    const r = await runKeel([
      "run",
      "x",
      "-w",
      tempWorkspace(),
      "--checkpoints",
      "postgres://keel@127.0.0.1:9/nope",
    ]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("cannot open the Postgres database postgres://…@127.0.0.1:9/nope");
  });
});

describe("postgres store", () => {
  it("keeps the analyst's findings: a second process on a new thread reuses them all", async () => {
    const url = await freshDb("store");
    fake = await startFake({ script: analystScript() });
    const dir = tempWorkspace();
    const { mkdirSync, writeFileSync } = await import("node:fs");
    mkdirSync(path.join(dir, "src"));
    for (let i = 0; i < 6; i++)
      writeFileSync(path.join(dir, `src/m${i}.ts`), `export const v${i} = ${i};\n`);
    const first = await runKeel([
      "analyze",
      dir,
      "--ollama-url",
      fake.url,
      "--checkpoints",
      url,
      "--thread",
      "a1",
      "--json",
    ]);
    expect(first.json).toMatchObject({ status: "done", analyzed: 6, reused: 0 });
    const before = fake.chatRequests().length;
    const second = await runKeel([
      "analyze",
      dir,
      "--ollama-url",
      fake.url,
      "--checkpoints",
      url,
      "--thread",
      "a2",
      "--json",
    ]);
    expect(second.json).toMatchObject({
      status: "done",
      analyzed: 0,
      reused: 6,
      folders_reused: 2,
    });
    expect(fake.chatRequests().length).toBe(before);
  });
});
