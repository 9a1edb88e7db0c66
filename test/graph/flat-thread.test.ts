/**
 * A long thread stays flat: the bytes a turn writes to the SQLite checkpointer do not grow with the
 * thread's age, with or without a 6 KB AGENTS.md. 300 turns through the real coder graph with the
 * bench's zero-latency scripted model; bytes are deterministic, so this is a test (timing is the
 * bench's: bench/README.md).
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { createCoderGraph } from "../../src/coder/graph.js";
import { KeelSqliteSaver } from "../../src/persistence/sqlite-saver.js";
import { ScriptedToolModel } from "../../bench/scripted-model.js";
import { notesWorkspace, readingRunConfig } from "../support/long-thread.js";

const TURNS = 300;
/** A 6 KB AGENTS.md. */
const AGENTS_MD = Array.from(
  { length: 120 },
  (_, i) => `- rule ${String(i).padStart(3, "0")}: keep functions short and name things well`,
).join("\n");

/** The scripted model, remembering each turn's system prompt. */
class Recording extends ScriptedToolModel {
  systems: string[] = [];
  override async _generate(messages: BaseMessage[]) {
    const system = messages.find((m) => SystemMessage.isInstance(m));
    this.systems.push(typeof system?.content === "string" ? system.content : "");
    return super._generate(messages);
  }
}

/** Runs a `TURNS`-turn thread; the saver's bytes written after each turn, and the prompts. */
async function thread(agentsMd: boolean) {
  const ws = notesWorkspace(TURNS);
  if (agentsMd) writeFileSync(path.join(ws, "AGENTS.md"), AGENTS_MD);
  const saver = new KeelSqliteSaver(path.join(ws, "keel.db"));
  const model = new Recording(TURNS);
  const graph = createCoderGraph({ createModel: () => model }).compile({ checkpointer: saver });
  const config = readingRunConfig("flat", ws, TURNS);
  const bytes = [saver.bytesWritten];
  const stream = await graph.stream(
    { messages: [new HumanMessage("hello, read the notes one by one")] },
    { ...config, streamMode: "updates" },
  );
  for await (const chunk of stream)
    if ((chunk as Record<string, unknown>)["tool-execute"]) bytes.push(saver.bytesWritten);
  const state = await graph.getState(config);
  const instructions = saver.db
    .prepare(
      `SELECT (SELECT coalesce(sum(length(blob)), 0) FROM keel_writes WHERE channel = 'instructions')
            + (SELECT coalesce(sum(length(blob)), 0) FROM keel_blobs WHERE channel = 'instructions')`,
    )
    .pluck()
    .get() as number;
  saver.close();
  return { bytes, instructions, systems: model.systems, values: state.values as { turns: number } };
}

/** Each turn's bytes over turns (from, to]. */
const deltas = (bytes: number[], from: number, to: number) =>
  bytes.slice(from + 1, to + 1).map((b, i) => b - bytes[from + i]!);

/**
 * A plain turn's bytes over turns (from, to]: the median turn. A few turns write more — the message
 * window's snapshot every `SNAPSHOT_EVERY` turns and a compaction's move — and how those fall in a
 * window of turns depends on where the compactions' sawtooth meets the snapshots, not on the
 * thread's age, so they are held by their own bound (`biggest`) and by the thread's mean.
 */
const steady = (bytes: number[], from: number, to: number) =>
  deltas(bytes, from, to).sort((a, b) => a - b)[Math.floor((to - from) / 2)]!;

/** The biggest single turn's bytes over turns (from, to]. */
const biggest = (bytes: number[], from: number, to: number) => Math.max(...deltas(bytes, from, to));

describe("a long thread stays flat", () => {
  it.each([false, true])(
    "a plain turn late in a 300-turn thread writes ≤ 1.1× one early, snapshots hold the window, ≤ 6 KB a turn (AGENTS.md: %s)",
    async (agentsMd) => {
      const { bytes, systems, values } = await thread(agentsMd);
      expect(bytes).toHaveLength(TURNS + 1);
      expect(values.turns).toBe(TURNS + 1); // every read, then the answer
      // a plain turn late writes what one early wrote
      expect(steady(bytes, TURNS - 50, TURNS)).toBeLessThanOrEqual(steady(bytes, 50, 100) * 1.1);
      // a snapshot or a compaction holds the window, not the thread: one of the first 110 turns
      // and one of the last 150 differ by where the window's sawtooth stood (up to 1.7× measured),
      // where a snapshot of the whole thread at turn 300 would be 3× the one at turn 100
      expect(biggest(bytes, TURNS / 2, TURNS)).toBeLessThanOrEqual(biggest(bytes, 0, 110) * 2.5);
      // everything, snapshots and compactions included
      expect((bytes[TURNS]! - bytes[0]!) / TURNS).toBeLessThanOrEqual(6 * 1024);
      // The instructions reach every turn, in one unchanged system prompt.
      expect(new Set(systems).size).toBe(1);
      if (agentsMd) expect(systems[0]).toContain(AGENTS_MD.slice(-200));
      else expect(systems[0]).not.toContain("project_instructions");
    },
  );

  it("a 6 KB AGENTS.md is stored once per request, not with every checkpoint", async () => {
    const [bare, withMd] = [await thread(false), await thread(true)];
    // Late in the thread a turn writes what it wrote without instructions (each checkpoint names
    // the instructions' version: a few bytes; a copy of the text would be 6 KB per checkpoint).
    const late = (b: number[]) => steady(b, TURNS - 50, TURNS);
    expect(late(withMd.bytes) - late(bare.bytes)).toBeLessThan(64);
    // In all, the text is written twice (the request's write and the stored value).
    expect(bare.instructions).toBeLessThan(64);
    expect(withMd.instructions).toBeGreaterThan(2 * AGENTS_MD.length);
    expect(withMd.instructions).toBeLessThan(2.5 * AGENTS_MD.length);
  });
});
