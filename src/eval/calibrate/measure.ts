/**
 * What calibration measures of the server directly, with the canary (models/canary.ts) rather
 * than tasks: whether it holds a prompt of the run's window (its own count of the prompt), the
 * largest window at which the model still repeats the marker that opens it, and how many requests
 * it answers at once.
 */
import { askServer, canary, canaryPrompt, type CanaryServer } from "../../models/canary.js";
import type { SearchMode } from "./search.js";

/** The smallest window the ladder tries: keel's own prompt needs about 1,500 tokens of it. */
const SMALLEST = 2048;

export interface Held {
  window: number;
  /** The server took the whole prompt: it counted about what keel sent. */
  ok: boolean;
  counted?: number;
  estimated: number;
  /** What the server said instead, if it refused or failed. */
  error?: string;
  /** The server's own window, where its refusal named it. */
  serverWindow?: number;
}

/** The canary at the run's window: does the server hold it (by its own count)? */
export async function measureHeld(s: CanaryServer, window: number): Promise<Held> {
  const r = await canary(s, window);
  return {
    window,
    ok: r.status === 200 && !r.truncated,
    ...(r.counted !== undefined ? { counted: r.counted } : {}),
    estimated: r.estimated,
    ...(r.error ? { error: r.error } : r.truncated ? { error: "the server cut the prompt" } : {}),
    ...(r.overContext?.window ? { serverWindow: r.overContext.window } : {}),
  };
}

export interface Recall {
  /** The largest window at which the model repeated the marker; undefined when it never did. */
  window?: number;
  tried: Array<{ window: number; recalled: boolean; counted?: number }>;
}

/**
 * The recall ladder: the canary at the window, then at half of it, down to `SMALLEST`, until the
 * model repeats the marker; `full` then tries between that window and the one above it (twice,
 * in steps of 512). A model that never repeats it (a small or random one) says nothing about how
 * much it holds: `window` stays undefined.
 */
export async function measureRecall(
  s: CanaryServer,
  window: number,
  mode: SearchMode,
  onTry?: (window: number, recalled: boolean) => void,
): Promise<Recall> {
  const tried: Recall["tried"] = [];
  const at = async (w: number) => {
    const r = await canary(s, w);
    const recalled = r.status === 200 && !r.truncated && r.recalled;
    tried.push({ window: w, recalled, ...(r.counted !== undefined ? { counted: r.counted } : {}) });
    onTry?.(w, recalled);
    return recalled;
  };
  let hi: number | undefined;
  let lo: number | undefined;
  for (let w = window; w >= SMALLEST; w = Math.floor(w / 2)) {
    if (await at(w)) {
      lo = w;
      break;
    }
    hi = w;
  }
  if (lo === undefined) return { tried };
  let found: number = lo;
  if (mode === "full" && hi !== undefined) {
    let above: number = hi;
    for (let step = 0; step < 2; step++) {
      const mid: number = Math.round((found + above) / 2 / 512) * 512;
      if (mid <= found || mid >= above) break;
      if (await at(mid)) found = mid;
      else above = mid;
    }
  }
  return { window: found, tried };
}

export interface Concurrency {
  /** Requests at once the runs should use (the analyst's `concurrency`). */
  chosen: number;
  tried: Array<{ requests: number; ok: boolean; error?: string; tokensPerSecond: number }>;
}

/** A speed-up worth more requests at once: a fifth more tokens per second. */
const WORTH = 1.2;

/**
 * Requests at once: 1, 2 (and 4 with `full`), each a prompt of 0.6 of the window (an analysed
 * unit's size), sent together. A server whose slots share one KV cache fails when they do not fit
 * it together (`500 Context size has been exceeded`); one that queues them gains nothing. The
 * choice is the most requests that all succeeded and were worth it (a fifth faster than fewer).
 */
export async function measureConcurrency(
  s: CanaryServer,
  window: number,
  mode: SearchMode,
): Promise<Concurrency> {
  const tried: Concurrency["tried"] = [];
  let chosen = 1;
  let best = 0;
  for (const n of mode === "quick" ? [1, 2] : [1, 2, 4]) {
    const started = Date.now();
    const readings = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        askServer(s, {
          prompt: `${i}. ${canaryPrompt(`KEEL-PARALLEL-${i}`, Math.floor(window * 0.6))}`,
          window,
          maxTokens: 16,
        }),
      ),
    );
    const seconds = Math.max(0.001, (Date.now() - started) / 1000);
    const failed = readings.find((r) => r.status !== 200);
    const tokens = readings.reduce((t, r) => t + (r.counted ?? 0) + (r.generated ?? 0), 0);
    const tokensPerSecond = tokens / seconds;
    tried.push({
      requests: n,
      ok: !failed,
      ...(failed ? { error: failed.error ?? `HTTP ${failed.status}` } : {}),
      tokensPerSecond,
    });
    if (failed) break;
    if (n === 1 || tokensPerSecond >= best * WORTH) chosen = n;
    best = Math.max(best, tokensPerSecond);
  }
  return { chosen, tried };
}
