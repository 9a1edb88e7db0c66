/**
 * keel's SQLite checkpointer on real threads: a file written by LangGraph's SqliteSaver (keel's
 * saver before) is read, with the same state; a resumed thread's state is the one the run left; a
 * checkpoint is read by key, not by scanning the thread's rows, and a file keel set up is not set up
 * again.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { describe, expect, it, vi } from "vitest";
import { runConfig } from "../../../src/coder/context.js";
import { createCoderGraph } from "../../../src/coder/graph.js";
import { KeelSqliteSaver } from "../../../src/persistence/sqlite-saver.js";
import {
  ALONG,
  CHECKPOINT,
  HISTORY,
  SEEDED,
  VALUES,
  WRITES,
} from "../../../src/persistence/sqlite-saver-sql.js";
import { ScriptedToolModel } from "../../../bench/scripted-model.js";
import { tempWorkspace } from "../../support/harness.js";

const TURNS = 30;

function workspace() {
  const ws = tempWorkspace();
  mkdirSync(path.join(ws, "notes"));
  for (let i = 0; i < TURNS; i++)
    writeFileSync(path.join(ws, `notes/n${i}.txt`), `note ${i}\n`.repeat(5));
  return ws;
}

const graphOn = (saver: BaseCheckpointSaver, ws: string) => ({
  graph: createCoderGraph({ createModel: () => new ScriptedToolModel(TURNS) }).compile({
    checkpointer: saver,
  }),
  config: runConfig("t", { workspace: ws, maxTurns: TURNS + 5, maxToolCalls: TURNS + 5 }),
});

async function run(saver: BaseCheckpointSaver, ws: string) {
  const { graph, config } = graphOn(saver, ws);
  await graph.invoke({ messages: [new HumanMessage("read the notes one by one")] }, config);
  return (await graph.getState(config)).values as Record<string, unknown>;
}

/** The state's values as plain data (messages by type, id and text). */
const plain = (values: Record<string, unknown>) =>
  JSON.parse(JSON.stringify(values)) as Record<string, unknown>;

describe("keel's SQLite saver", () => {
  it("reads a thread LangGraph's SqliteSaver wrote, state for state", async () => {
    const ws = workspace();
    const file = path.join(ws, "old.db");
    const old = SqliteSaver.fromConnString(file);
    const before = await run(old, ws);
    old.db.close();
    const saver = new KeelSqliteSaver(file);
    const { graph, config } = graphOn(saver, ws);
    const after = (await graph.getState(config)).values as Record<string, unknown>;
    expect(plain(after)).toEqual(plain(before));
    expect((after.messages as unknown[]).length).toBe(2 * TURNS + 2);
    // The history is there to go back to, too.
    let n = 0;
    for await (const snapshot of graph.getStateHistory(config)) n += snapshot ? 1 : 0;
    expect(n).toBeGreaterThan(2 * TURNS);
    saver.close();
  });

  /** A thread run on a saver of a new file, then that file opened by a fresh saver. */
  async function runThenReopen(ws: string) {
    const file = path.join(ws, "keel.db");
    const first = new KeelSqliteSaver(file);
    const left = await run(first, ws);
    first.close();
    return { left, again: new KeelSqliteSaver(file) };
  }

  it("a fresh saver on the file gives the state the run left (resume)", async () => {
    const ws = workspace();
    const { left, again } = await runThenReopen(ws);
    const { graph, config } = graphOn(again, ws);
    const resumed = (await graph.getState(config)).values as Record<string, unknown>;
    expect(plain(resumed)).toEqual(plain(left));
    expect(Object.keys(resumed.seen as object)).toHaveLength(TURNS);
    again.close();
  });

  it("a file keel wrote a checkpoint to is opened without creating or copying anything", async () => {
    const ws = workspace();
    const { left, again } = await runThenReopen(ws);
    const exec = vi.spyOn(again.db, "exec");
    const prepared = vi.spyOn(again.db, "prepare");
    const { graph, config } = graphOn(again, ws);
    expect(plain((await graph.getState(config)).values as Record<string, unknown>)).toEqual(
      plain(left),
    );
    expect(exec).not.toHaveBeenCalled();
    // Only the reads: no DDL, no look for a legacy SqliteSaver's tables; no delta channel has a
    // stored value, so the history is the writes along the ancestors.
    expect(prepared.mock.calls.map(([sql]) => sql)).toEqual([
      CHECKPOINT(false),
      VALUES,
      WRITES,
      SEEDED,
      ALONG,
    ]);
    again.close();
    // A file with no checkpoint of keel's (here: none at all) is set up on open.
    const fresh = new KeelSqliteSaver(path.join(ws, "new.db"));
    const made = vi.spyOn(fresh.db, "exec");
    await fresh.getTuple({ configurable: { thread_id: "t" } });
    expect(made).toHaveBeenCalledTimes(1);
    fresh.close();
  });

  it("reads a checkpoint and its ancestors by key: no statement scans a table whole", async () => {
    const ws = workspace();
    const saver = new KeelSqliteSaver(path.join(ws, "keel.db"));
    await run(saver, ws);
    const args = {
      thread: "t",
      ns: "",
      id: "x",
      channels: '["messages"]',
      checkpoint: '{"channel_versions":{"messages":"1"}}',
    };
    for (const sql of [
      CHECKPOINT(false),
      CHECKPOINT(true),
      VALUES,
      WRITES,
      SEEDED,
      ALONG,
      HISTORY,
    ]) {
      const plan = saver.db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(args)
        .map((r) => (r as { detail: string }).detail);
      // Scanned: only the statement's own CTEs and json_each tables (one checkpoint, its chain).
      const scanned = plan.flatMap((d) => /^SCAN (\w+)/.exec(d)?.[1] ?? []);
      expect(scanned.filter((t) => !["cp", "chain", "want", "v", "json_each"].includes(t))).toEqual(
        [],
      );
      expect(plan.filter((d) => /AUTOMATIC/.test(d))).toEqual([]);
      expect(plan.some((d) => /^SEARCH/.test(d))).toBe(true);
    }
    saver.close();
  });
});
