/**
 * Folds for a llama-server that shifts its cache (settings `cacheReuse`: `n_cache_reuse`): every
 * request asks for the shift, each fold keeps most of the conversation and puts the record after
 * it, and the server (the fake, which reuses runs as llama-server's chunk reuse does) serves over
 * half of every folded prompt from its cache. A server that cannot shift gets neither.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { beforeAll, describe, expect, it } from "vitest";
import { runConfig } from "../../src/coder/context.js";
import { createCoderGraph } from "../../src/coder/graph.js";
import { RECORD_HEADER } from "../../src/coder/history/record.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { startFakeOpenAI, type FakeOpenAI } from "../../src/testing/fake-openai/index.js";
import type { ServerKind } from "../../src/models/openai/quirks.js";
import { call, calls, keelScript, tempWorkspace } from "../support/harness.js";

const READS = 40;
const MODEL = "qwen2.5-coder-7b-instruct";

/** Reads notes/n0.txt, n1.txt… one a turn (the newest asked for, found in the prompt), then answers. */
const reader = keelScript(
  (req) => {
    const asked = [...JSON.stringify(req.messages).matchAll(/notes\/n(\d+)\.txt/g)].map((m) =>
      Number(m[1]),
    );
    const next = asked.length ? Math.max(...asked) + 1 : 0;
    return next < READS
      ? calls(call("read_file", { path: `notes/n${next}.txt` }))
      : { content: `I read ${READS} notes.` };
  },
  { plan: ["Read each note", "Summarise them"], intent: "analyze" },
);

function notes(): string {
  const ws = tempWorkspace();
  mkdirSync(path.join(ws, "notes"));
  for (let i = 0; i < READS; i++)
    writeFileSync(
      path.join(ws, `notes/n${i}.txt`),
      Array.from({ length: 24 }, (_, l) => `export const v${i}_${l} = compute(${i}, ${l});`).join(
        "\n",
      ),
    );
  return ws;
}

interface Run {
  bodies: Array<Record<string, unknown>>;
  usage: Array<{ prompt: number; cached: number }>;
  folds: number[];
  events: Array<{ type?: string }>;
  state: CoderStateValue;
}

async function run(server: ServerKind, cacheReuse: number, shifts = true): Promise<Run> {
  const fake: FakeOpenAI = await startFakeOpenAI({ server, script: reader, slots: 1, shifts });
  try {
    const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
    const config = runConfig(`shift-${server}-${cacheReuse}-${shifts}`, {
      provider: "openai",
      baseUrl: fake.baseUrl,
      model: MODEL,
      workspace: notes(),
      contextWindow: 8192,
      cacheReuse,
      maxTurns: READS + 5,
      maxToolCalls: READS + 5,
      retryBaseMs: 5,
    });
    const folds: number[] = [];
    const events: Array<{ type?: string }> = [];
    let state: CoderStateValue | undefined;
    const stream = await graph.stream(
      { messages: [new HumanMessage("Summarise the notes in notes/, one by one from n0.txt.")] },
      { ...config, streamMode: ["custom", "values"] },
    );
    for await (const [mode, e] of stream as AsyncIterable<[string, unknown]>) {
      if (mode === "values") state = e as CoderStateValue;
      else {
        events.push(e as { type?: string });
        if ((e as { type?: string }).type === "compacted") folds.push(fake.answers.length);
      }
    }
    const usage = fake.answers.map((a) => ({
      prompt: a.usage.prompt_tokens,
      cached:
        (a.usage as { prompt_tokens_details?: { cached_tokens?: number } }).prompt_tokens_details
          ?.cached_tokens ?? 0,
    }));
    return {
      bodies: fake.chatBodies({ turnsOnly: true }) as unknown as Array<Record<string, unknown>>,
      usage,
      folds,
      events,
      state: state!,
    };
  } finally {
    await fake.close();
  }
}

const share = (r: Run) =>
  r.usage.reduce((a, u) => a + u.cached, 0) / r.usage.reduce((a, u) => a + u.prompt, 0);
const recordIndex = (body: Record<string, unknown>) =>
  (body.messages as Array<{ content?: unknown }>).findIndex(
    (m) => typeof m.content === "string" && m.content.startsWith(RECORD_HEADER),
  );

describe("cacheReuse on llama-server", () => {
  let shifted: Run;
  let plain: Run;
  beforeAll(async () => {
    [shifted, plain] = await Promise.all([run("llama.cpp", 256), run("llama.cpp", 0)]);
  }, 120_000);

  it("asks for the shift on every request; off, never", () => {
    expect(shifted.state.status).toBe("done");
    for (const b of shifted.bodies)
      expect(b).toMatchObject({ n_cache_reuse: 256, cache_prompt: true });
    for (const b of plain.bodies) expect(b).not.toHaveProperty("n_cache_reuse");
  });

  it("each fold keeps over half of the previous prompt in the server's cache; plain folds keep the fixed part", () => {
    expect(shifted.folds.length).toBeGreaterThan(2);
    // the answer at index i is request i; a fold is announced before its request is sent
    for (const i of shifted.folds)
      expect(shifted.usage[i]!.cached).toBeGreaterThan(shifted.usage[i - 1]!.prompt / 2);
    expect(plain.folds.length).toBeGreaterThan(0);
    for (const i of plain.folds)
      expect(plain.usage[i]!.cached).toBeLessThan(plain.usage[i - 1]!.prompt / 2);
    expect(share(shifted)).toBeGreaterThan(share(plain) + 0.02);
  });

  it("puts the record after the turns a fold keeps, before the newest call; the thread remembers where", () => {
    const folded = shifted.bodies.filter((b) => recordIndex(b) >= 0);
    expect(folded.length).toBeGreaterThan(0);
    for (const b of folded) {
      const messages = b.messages as Array<{ role: string; tool_calls?: unknown[] }>;
      const at = recordIndex(b);
      // system, request, plan, then kept calls with their results before the record
      expect(messages.slice(0, at).filter((m) => m.tool_calls).length).toBeGreaterThan(2);
      expect(messages[at + 1]!.role).toBe("assistant");
    }
    expect(shifted.state.fit?.recordAt).toBeGreaterThan(shifted.state.fit!.foldedUpTo);
    // plain folds: the record right after the pinned request and plan
    const plainFolded = plain.bodies.filter((b) => recordIndex(b) >= 0);
    for (const b of plainFolded) expect(recordIndex(b)).toBeLessThanOrEqual(3);
    expect(plain.state.fit?.recordAt).toBeUndefined();
  });
});

describe("cacheReuse on a server that cannot shift", () => {
  it("vLLM gets no n_cache_reuse, and folds as usual", async () => {
    const r = await run("vllm", 256);
    expect(r.state.status).toBe("done");
    for (const b of r.bodies) expect(b).not.toHaveProperty("n_cache_reuse");
    expect(r.folds.length).toBeGreaterThan(0);
    expect(r.state.fit?.recordAt).toBeUndefined();
  }, 120_000);
});

describe("cacheReuse on a llama-server that cannot shift this model (sliding-window attention, recurrent)", () => {
  it("the first fold shows it (the kept turns evaluated again): later folds are plain", async () => {
    const r = await run("llama.cpp", 256, false);
    expect(r.state.status).toBe("done");
    expect(r.folds.length).toBeGreaterThan(2);
    const [first, ...later] = r.folds;
    // the first fold was laid out for a shift, and the server served its fixed part only
    expect(recordIndex(r.bodies[first!]!)).toBeGreaterThan(3);
    expect(r.usage[first!]!.cached).toBeLessThan(r.usage[first! - 1]!.prompt / 2);
    // from then on: the record right after the request and plan, and no n_cache_reuse sent
    for (const i of later) expect(recordIndex(r.bodies[i]!)).toBeLessThanOrEqual(3);
    for (const b of r.bodies.slice(first! + 1)) expect(b).not.toHaveProperty("n_cache_reuse");
    expect(r.state.fit).toMatchObject({ unshifted: true });
    // said once, when it was found
    expect(r.events.filter((e) => e.type === "unshifted")).toHaveLength(1);
  }, 120_000);
});
