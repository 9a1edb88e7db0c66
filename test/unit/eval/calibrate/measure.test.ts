/**
 * What calibration measures of the server with the canary, against a server as harsh as Ollama
 * with one slot (OLLAMA_NUM_PARALLEL=1): requests are served one at a time, each taking time in
 * proportion to its prompt unless it is the prompt it just evaluated (its cache), and a request
 * whose client gave up is dropped from the queue.
 */
import { describe, expect, it } from "vitest";
import {
  measureConcurrency,
  measureHeld,
  measureRecall,
} from "../../../../src/eval/calibrate/measure.js";
import type { CanaryServer } from "../../../../src/models/canary.js";
import { estimateTokens } from "../../../../src/guard/token-estimate.js";

interface Seen {
  window: number;
  tokens: number;
  /** served: answered; cut: the client gave up on it (in the queue or while it ran). */
  outcome: "served" | "cut";
}

/** One slot, `msPer1k` ms per 1,000 prompt tokens; never repeats the marker (a random model). */
function oneSlot(msPer1k: number): { server: CanaryServer; seen: Seen[] } {
  const seen: Seen[] = [];
  let free = Promise.resolve();
  let last = "";
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    const body = JSON.parse(init.body as string) as {
      messages: Array<{ content: string }>;
      options: { num_ctx: number };
    };
    const content = body.messages[0]!.content;
    const tokens = estimateTokens(content);
    // its cache holds the last prompt it evaluated: the same prompt again costs nothing
    const cached = content === last;
    last = content;
    const entry: Seen = { window: body.options.num_ctx, tokens, outcome: "cut" };
    seen.push(entry);
    const signal = init.signal!;
    const turn = free.then(
      () =>
        new Promise<void>((resolve, reject) => {
          if (signal.aborted) return reject(new Error("aborted"));
          const t = setTimeout(resolve, cached ? 0 : (tokens * msPer1k) / 1000);
          signal.addEventListener("abort", () => {
            clearTimeout(t);
            reject(new Error("aborted"));
          });
        }),
    );
    free = turn.catch(() => undefined);
    await turn;
    entry.outcome = "served";
    return new Response(
      JSON.stringify({
        message: { content: "ledger barrels" },
        prompt_eval_count: tokens,
        eval_count: 2,
        done_reason: "stop",
      }),
    );
  }) as typeof fetch;
  return { server: { provider: "ollama", url: "http://x", model: "m", fetchImpl }, seen };
}

describe("calibration's server measures", () => {
  it("requests at once on a server that queues them: the second batch is cut once it cannot be worth it, and one stands", async () => {
    // 0.6 of a 4,096 window ≈ 2,460 tokens ≈ 1 s alone; two queued take ≈ 2 s, and are worth
    // it only under 2 × 1 / 1.2 ≈ 1.7 s
    const { server, seen } = oneSlot(400);
    const r = await measureConcurrency({ ...server, timeoutMs: 120_000 }, 4096, "quick");
    expect(r.chosen).toBe(1);
    expect(r.tried.map((t) => [t.requests, t.ok])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(r.tried[1]!.error).toMatch(/^cut: not done in 1\.\d s, the most it could take/);
    // the server saw the queued request given up on, not waited for
    expect(seen.map((x) => x.outcome)).toEqual(["served", "served", "cut"]);
  });

  it("the recall ladder does not ask the canary at the window it was just held at again", async () => {
    const { server, seen } = oneSlot(1);
    const held = await measureHeld(server, 8192);
    expect(held).toMatchObject({ ok: true, recalled: false });
    const r = await measureRecall(server, 8192, "quick", undefined, held);
    expect(r.window).toBeUndefined();
    expect(r.tried.map((t) => t.window)).toEqual([8192, 4096, 2048]);
    // one canary at 8,192 (the held one), then one a rung
    expect(seen.map((x) => x.window)).toEqual([8192, 4096, 2048]);
  });

  it("requests at once after the held canary: its speed stands for one alone, not measured again", async () => {
    const { server, seen } = oneSlot(400);
    const held = await measureHeld(server, 4096);
    expect(held.tokensPerSecond).toBeGreaterThan(0);
    const r = await measureConcurrency(server, 4096, "quick", held.tokensPerSecond);
    expect(r.chosen).toBe(1);
    expect(r.tried.map((t) => [t.requests, t.ok])).toEqual([
      [1, true],
      [2, false],
    ]);
    // the held canary, then the two at once (the second cut in the queue)
    expect(seen.map((x) => x.outcome)).toEqual(["served", "served", "cut"]);
  });

  it("a held canary the server did not answer by its deadline is not measured, not refused", async () => {
    const { server, seen } = oneSlot(100_000);
    const held = await measureHeld({ ...server, timeoutMs: 200 }, 4096);
    expect(held).toMatchObject({ ok: false, answered: false });
    expect(held.tokensPerSecond).toBeUndefined();
    expect(seen.map((x) => x.outcome)).toEqual(["cut"]);
  });
});
