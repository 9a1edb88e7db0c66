/**
 * What a re-run of the analyst costs, counted: with nothing changed, no file is read, no model is
 * asked, nothing is written but the manifest and the listing's index, and the units take one graph
 * step per 512; after a one-file change, that file is read and analysed, its folders and the
 * synthesis asked again, and nothing else.
 */
import { cpSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  InMemoryStore,
  MemorySaver,
  type Operation,
  type OperationResults,
} from "@langchain/langgraph";
import { beforeAll, describe, expect, it } from "vitest";
import { analystRunConfig } from "../../src/analyst/context.js";
import { createAnalystGraph } from "../../src/analyst/graph.js";
import type { AnalystStateValue } from "../../src/analyst/state.js";
import type { ChatBody } from "../../src/testing/fake-ollama/index.js";
import { analystScript } from "../../src/testing/script.js";
import { generateRepo, type FixtureInfo } from "../support/fixture-repo.js";
import { fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();

/** A store that counts what it is asked: reads, writes (by key kind), batches. */
class CountingStore extends InMemoryStore {
  reads = 0;
  writes: string[] = [];
  batches = 0;
  override async batch<Op extends readonly Operation[]>(ops: Op): Promise<OperationResults<Op>> {
    this.batches++;
    for (const op of ops) {
      if ("value" in op) this.writes.push(op.key.replace(/^(unit|dir):.*/, "$1"));
      else if ("key" in op) this.reads++;
    }
    return super.batch(ops);
  }
  reset() {
    this.reads = 0;
    this.writes = [];
    this.batches = 0;
  }
}
/** A checkpointer that counts the checkpoints written: one per graph step. */
class CountingSaver extends MemorySaver {
  checkpoints = 0;
  override put(...args: Parameters<MemorySaver["put"]>) {
    this.checkpoints++;
    return super.put(...args);
  }
}

let base: string;
let info: FixtureInfo;
beforeAll(() => {
  base = tempWorkspace("keel-incr-fixture-");
  info = generateRepo(base);
});

const count = (kinds: string[]) =>
  kinds.reduce<Record<string, number>>((a, k) => ({ ...a, [k]: (a[k] ?? 0) + 1 }), {});
const unitOf = (b: ChatBody) =>
  /<unit path="([^"]+)"/.exec(b.messages!.map((m) => m.content).join("\n"))?.[1];
const folderOf = (b: ChatBody) =>
  /<folder path="([^"]+)"/.exec(b.messages!.map((m) => m.content).join("\n"))?.[1];

async function setup(model: string) {
  const fake = model === "none" ? undefined : await startFake({ script: analystScript() });
  const target = tempWorkspace("keel-incr-");
  cpSync(base, target, { recursive: true });
  // a listing trusts a file's size and times only once they are 2 s older than the listing
  // (git's "racily clean" files): let the copy age first
  await new Promise((r) => setTimeout(r, 2100));
  const store = new CountingStore();
  const saver = new CountingSaver();
  const graph = createAnalystGraph().compile({ checkpointer: saver, store });
  let n = 0;
  const run = async () => {
    store.reset();
    saver.checkpoints = 0;
    const before = fake?.chatBodies().length ?? 0;
    const config = analystRunConfig(`t${++n}`, {
      target,
      model,
      ollamaUrl: fake?.url ?? "http://127.0.0.1:9",
      retryBaseMs: 5,
    });
    const state = (await graph.invoke({}, config)) as AnalystStateValue;
    const asked = fake?.chatBodies().slice(before) ?? [];
    return {
      state,
      units: asked.map(unitOf).filter(Boolean),
      folders: asked.map(folderOf).filter(Boolean).sort(),
      syntheses: asked.filter((b) => JSON.stringify(b.format).includes("architecture")).length,
      reads: store.reads,
      writes: count(store.writes),
      checkpoints: saver.checkpoints,
    };
  };
  return { target, run };
}

describe("what a re-run recomputes", () => {
  it("with a model: nothing changed costs no read file, no model call, no record written; one file costs that file, its folders and the synthesis", async () => {
    const { target, run } = await setup("qwen3:8b");
    const first = await run();
    expect(first.state).toMatchObject({ total: 320, hashed: 320, analyzed: 320 });
    const folders = first.state.folderTotal;

    const same = await run();
    expect(same.state).toMatchObject({
      hashed: 0,
      analyzed: 0,
      reused: 320,
      foldersAnalyzed: 0,
      foldersReused: folders,
    });
    expect([same.units, same.folders, same.syntheses]).toEqual([[], [], 0]);
    // written: the run's manifest and the listing's index, nothing else
    expect(same.writes).toEqual({ manifest: 1, "stat-index": 1 });
    // read: the listing's index; in each later step the manifest, the last run and the records'
    // epoch (which say nothing changed) — no unit's or folder's record
    expect(same.reads).toBe(1 + 3 * 3);
    // checkpoints: the input, the start, enumerate, one step of units (320 < 512), one of
    // folders, the report
    expect(same.checkpoints).toBe(6);

    const changed = "src/api/sub0/m0.ts";
    writeFileSync(path.join(target, changed), "export const value0 = 42;\n");
    const one = await run();
    expect(one.state).toMatchObject({
      hashed: 1,
      analyzed: 1,
      reused: 319,
      foldersAnalyzed: 4,
      foldersReused: folders - 4,
    });
    expect([one.units, one.folders, one.syntheses]).toEqual([
      [changed],
      [".", "src", "src/api", "src/api/sub0"],
      1,
    ]);
    // the old version's record goes, the new one and its four folders are written, the synthesis;
    // each step that wrote records says so (the epoch: enumerate, the unit's step, one step per
    // folder depth), the report says what it was made of
    expect(one.writes).toEqual({
      manifest: 1,
      "stat-index": 1,
      unit: 2,
      dir: 4,
      report: 1,
      "records-epoch": 6,
      "last-run": 1,
    });
  });

  it("without a model: nothing changed reads no file and computes no facts; one file, that file's", async () => {
    const { target, run } = await setup("none");
    const first = await run();
    expect(first.state).toMatchObject({ total: 320, hashed: 320, analyzed: 320 });
    const same = await run();
    expect(same.state).toMatchObject({ hashed: 0, analyzed: 0, reused: 320 });
    expect(same.writes).toEqual({ manifest: 1, "stat-index": 1 });
    expect(same.checkpoints).toBe(6);
    // a file touched but not changed is read again (its times changed) and found the same
    utimesSync(path.join(target, info.units[0]!), new Date(), new Date());
    writeFileSync(path.join(target, info.units[1]!), "changed\n");
    const one = await run();
    expect(one.state).toMatchObject({ hashed: 2, analyzed: 1, reused: 319 });
    expect(one.writes).toEqual({
      manifest: 1,
      "stat-index": 1,
      unit: 2,
      "records-epoch": 2,
      "last-run": 1,
    });
  });
});
