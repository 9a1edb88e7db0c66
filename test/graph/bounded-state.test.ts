/**
 * A long thread's state stays bounded, and the model cannot tell: folded messages leave graph state
 * (history/archive.ts) with the record keeping their account, so every prompt is the one the full
 * conversation would have made; and a resume replays what was written since the newest snapshots,
 * not the thread. Two requests on one thread through the real coder graph, with the bench's scripted
 * model, once as keel runs and once with the move turned off.
 */
import path from "node:path";
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { createCoderGraph } from "../../src/coder/graph.js";
import { SNAPSHOT_EVERY } from "../../src/coder/channels.js";
import { TRAIL_WINDOW } from "../../src/coder/call-tally.js";
import { runRecord } from "../../src/coder/learning/run-record.js";
import { wholeConversation } from "../../src/coder/history/whole.js";
import type * as Archive from "../../src/coder/history/archive.js";
import { ARCHIVE_BATCH } from "../../src/coder/history/archive.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { KeelSqliteSaver } from "../../src/persistence/sqlite-saver.js";
import { KeelPostgresSaver } from "../../src/persistence/postgres-saver.js";
import { ScriptedToolModel } from "../../bench/scripted-model.js";
import { tempWorkspace } from "../support/harness.js";
import { notesWorkspace, readingRunConfig } from "../support/long-thread.js";

/** Turns `off` keeps every message in state (the thread as it was before the move existed). */
const moves = vi.hoisted(() => ({ off: false }));
vi.mock("../../src/coder/history/archive.js", async (load) => {
  const real = await load<typeof Archive>();
  return {
    ...real,
    archiveFolded: (a: Parameters<typeof real.archiveFolded>[0]) =>
      moves.off ? undefined : real.archiveFolded(a),
  };
});
afterEach(() => {
  moves.off = false;
});

/** The scripted model, keeping each prompt as text. */
class Recording extends ScriptedToolModel {
  constructor(
    turns: number,
    readonly prompts: string[],
  ) {
    super(turns);
  }
  override async _generate(messages: BaseMessage[]) {
    this.prompts.push(
      messages
        .map(
          (m) =>
            `${m.getType()}: ${JSON.stringify(m.content)} ${JSON.stringify((m as { tool_calls?: unknown }).tool_calls ?? [])}`,
        )
        .join("\n"),
    );
    return super._generate(messages);
  }
}

const FIRST = 260;
const SECOND = 420;

/** keel's savers, each opening one store again and again (a resume is a fresh saver). */
type Saver = KeelSqliteSaver | KeelPostgresSaver;
let schemas = 0;
const SAVERS: Record<string, () => () => Promise<Saver>> = {
  sqlite: () => {
    const file = path.join(tempWorkspace(), "keel.db");
    return () => Promise.resolve(new KeelSqliteSaver(file));
  },
  postgres: () => {
    const schema = `bounded_${process.pid}_${++schemas}`;
    return async () => {
      const saver = new KeelPostgresSaver(inject("pgUrl"), { schema });
      await saver.setup();
      return saver;
    };
  },
};
const close = (s: Saver) => (s instanceof KeelSqliteSaver ? s.close() : s.end());

/** Two requests on one thread (`FIRST` reads, then on to `SECOND`); the prompts, the state. */
async function twoRequests(
  open: () => Promise<Saver> = SAVERS.sqlite!(),
  first = FIRST,
  second = SECOND,
) {
  const ws = notesWorkspace(second);
  const saver = await open();
  const prompts: string[] = [];
  let model = new Recording(first, prompts);
  const graph = createCoderGraph({ createModel: () => model }).compile({ checkpointer: saver });
  const config = readingRunConfig("long", ws, second);
  await graph.invoke({ messages: [new HumanMessage("hello, read the notes one by one")] }, config);
  model = new Recording(second, prompts);
  await graph.invoke({ messages: [new HumanMessage("now read the rest of them")] }, config);
  const state = (await graph.getState(config)).values as CoderStateValue;
  await close(saver);
  return { prompts, state, open, config };
}

/** What a resume must rebuild: the conversation (by its ids), the counts, the collections. */
const kept = (s: CoderStateValue) => ({
  messages: s.messages.map((m) => m.id),
  archived: s.archived,
  trail: s.trail,
  callTally: s.callTally,
  seen: s.seen,
  carried: s.carried,
});

/** The thread's state as a fresh saver and graph read it, and the writes its history replayed. */
async function resume(open: () => Promise<Saver>, config: RunnableConfig) {
  const saver = await open();
  let replayed = 0;
  const history = saver.getDeltaChannelHistory.bind(saver);
  saver.getDeltaChannelHistory = async (options) => {
    const h = await history(options);
    for (const ch of Object.values(h)) replayed += ch.writes.length;
    return h;
  };
  const graph = createCoderGraph({ createModel: () => new ScriptedToolModel(0) }).compile({
    checkpointer: saver,
  });
  const state = kept((await graph.getState(config)).values as CoderStateValue);
  // Read write by write, not through the history query: what the state must account for.
  const whole = (await wholeConversation(saver, config)).length;
  await close(saver);
  return { state, replayed, whole };
}

describe("a long thread's state is bounded", () => {
  it("moves folded messages out of state, and every prompt is the one the whole conversation makes", async () => {
    moves.off = true;
    const whole = await twoRequests();
    moves.off = false;
    const moved = await twoRequests();
    expect(whole.state.archived).toBe(0);
    expect(moved.state.archived).toBeGreaterThanOrEqual(4 * ARCHIVE_BATCH);
    // Everything the thread said is still accounted for, the moved messages by count, and in the
    // checkpointer, message by message.
    expect(moved.state.archived + moved.state.messages.length).toBe(whole.state.messages.length);
    const saver = await moved.open();
    const all = await wholeConversation(saver, moved.config);
    await close(saver);
    const text = (ms: readonly BaseMessage[]) => ms.map((m) => `${m.getType()} ${m.text}`);
    expect(text(all)).toEqual(text(whole.state.messages));
    expect(moved.state.messages.length).toBeLessThan(whole.state.messages.length / 4);
    // The model saw the same prompts, turn by turn, across both requests.
    expect(moved.prompts).toHaveLength(whole.prompts.length);
    const differing = moved.prompts.findIndex((p, i) => p !== whole.prompts[i]);
    expect(differing).toBe(-1);
    // The run's whole tally stands while the trail keeps only its newest calls: the run record
    // (keel stats, the lessons) is the one the whole conversation gives.
    expect(moved.state.trail.length).toBe(TRAIL_WINDOW);
    expect(moved.state.turns).toBe(SECOND - FIRST + 1);
    const record = (s: CoderStateValue) => {
      const r = runRecord("long", "now", s)!;
      return { ...r, calls: r.calls.map((c) => JSON.stringify(c)).sort() };
    };
    expect(record(moved.state)).toEqual(record(whole.state));
    expect(record(moved.state).calls).toHaveLength(SECOND - FIRST);
  });

  it.each(Object.keys(SAVERS))(
    "a resume rebuilds the state the run left, and replays the writes since the newest snapshots, not the thread's (%s)",
    async (kind) => {
      // A short thread, before any snapshot: the walk goes back to its start.
      const short = await twoRequests(SAVERS[kind]!(), 6, 12);
      const again = await resume(short.open, short.config);
      expect(again.state).toEqual(kept(short.state));
      expect(again.state.messages.length).toBe(again.whole);
      const { open, config, state } = await twoRequests(SAVERS[kind]!());
      const resumed = await resume(open, config);
      expect(resumed.state).toEqual(kept(state));
      expect(resumed.state.archived + resumed.state.messages.length).toBe(resumed.whole);
      // Four collections, each replayed from its snapshot: a few hundred writes of the thread's
      // ~2,500 (two messages, a trail entry, a tally note and a seen file per turn).
      expect(resumed.replayed).toBeGreaterThan(0);
      expect(resumed.replayed).toBeLessThanOrEqual(4 * 2 * SNAPSHOT_EVERY);
    },
  );
});
