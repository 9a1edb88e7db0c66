/**
 * What calibration measures of the server directly, with the canary (models/canary.ts) rather
 * than tasks: whether it holds a prompt of the run's window (its own count of the prompt), the
 * largest window at which the model still repeats the marker that opens it, and how many requests
 * it answers at once.
 */
import {
  askServer,
  canary,
  canaryPrompt,
  type CanaryReading,
  type CanaryServer,
} from "../../models/canary.js";
import { estimateTokens } from "../../guard/token-estimate.js";
import type { SearchMode } from "./search.js";

/** The smallest window the ladder tries: keel's own prompt needs about 1,500 tokens of it. */
const SMALLEST = 2048;

export interface Held {
  window: number;
  /** The server took the whole prompt: it counted about what keel sent. */
  ok: boolean;
  /** It answered at all (no answer by the canary's deadline says nothing of the window). */
  answered: boolean;
  counted?: number;
  estimated: number;
  /** What the server said instead, if it refused or failed. */
  error?: string;
  /** The server's own window, where its refusal named it. */
  serverWindow?: number;
  /** The model repeated the marker (the recall ladder's first rung: not asked twice). */
  recalled: boolean;
  /** Prompt and reply tokens a second, when it held the prompt: one request's speed alone. */
  tokensPerSecond?: number;
}

/** The canary at the run's window: does the server hold it (by its own count)? */
export async function measureHeld(s: CanaryServer, window: number): Promise<Held> {
  const r = await canary(s, window);
  return {
    window,
    ok: r.status === 200 && !r.truncated,
    answered: r.status !== 0,
    ...(r.counted !== undefined ? { counted: r.counted } : {}),
    estimated: r.estimated,
    ...(r.error ? { error: r.error } : r.truncated ? { error: "the server cut the prompt" } : {}),
    ...(r.overContext?.window ? { serverWindow: r.overContext.window } : {}),
    recalled: recalledIn(r),
    ...(r.status === 200 && !r.truncated && r.counted
      ? { tokensPerSecond: (r.counted + (r.generated ?? 0)) / Math.max(0.001, r.ms / 1000) }
      : {}),
  };
}

/** The model repeated the marker of a prompt the server took whole. */
const recalledIn = (r: CanaryReading) => r.status === 200 && !r.truncated && r.recalled;

export interface Recall {
  /** The largest window at which the model repeated the marker; undefined when it never did. */
  window?: number;
  tried: Array<{ window: number; recalled: boolean; counted?: number }>;
}

/**
 * The recall ladder: the canary at the window, then at half of it, down to `SMALLEST`, until the
 * model repeats the marker; `full` then tries between that window and the one above it (twice,
 * in steps of 512). A model that never repeats it (a small or random one) says nothing about how
 * much it holds: `window` stays undefined. `held`, the canary already sent at `window`
 * (measureHeld), is its first rung: a canary of the whole window costs minutes on a CPU.
 */
export async function measureRecall(
  s: CanaryServer,
  window: number,
  mode: SearchMode,
  onTry?: (window: number, recalled: boolean) => void,
  held?: Held,
): Promise<Recall> {
  const tried: Recall["tried"] = [];
  const at = async (w: number) => {
    const r = held?.window === w ? held : await canary(s, w);
    const recalled = "ok" in r ? r.recalled : recalledIn(r);
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
 * More requests get only the time in which they could still be worth it (Ollama with one slot
 * queues them, and a queued request of a large window takes minutes on a CPU): past it they are
 * cut, the probe says so, and fewer stand. `alone`, one request's tokens a second already measured
 * (the held canary), stands for the first step.
 */
export async function measureConcurrency(
  s: CanaryServer,
  window: number,
  mode: SearchMode,
  alone?: number,
): Promise<Concurrency> {
  const tried: Concurrency["tried"] = [];
  let chosen = 1;
  let best = alone ?? 0;
  if (alone) tried.push({ requests: 1, ok: true, tokensPerSecond: alone });
  for (const n of (mode === "quick" ? [1, 2] : [1, 2, 4]).filter((m) => m > 1 || !alone)) {
    // a prompt of its own each time: one sent before would come from the server's cache
    const prompts = Array.from({ length: n }, (_, i) =>
      canaryPrompt(`KEEL-PARALLEL-${n}-${i}`, Math.floor(window * 0.6)),
    );
    // n at once is worth it only at WORTH × best tokens/s: past that time, it cannot be
    const sent = prompts.reduce((t, p) => t + estimateTokens(p), 0);
    const bound = n === 1 || !best ? undefined : Math.ceil((1000 * sent) / (best * WORTH));
    const started = Date.now();
    const readings = await Promise.all(
      prompts.map((prompt) =>
        askServer(bound ? { ...s, timeoutMs: Math.min(bound, s.timeoutMs ?? bound) } : s, {
          prompt,
          window,
          maxTokens: 16,
        }),
      ),
    );
    const seconds = Math.max(0.001, (Date.now() - started) / 1000);
    const failed = readings.find((r) => r.status !== 200);
    const tokens = readings.reduce((t, r) => t + (r.counted ?? 0) + (r.generated ?? 0), 0);
    const tokensPerSecond = tokens / seconds;
    const error =
      failed && bound && failed.status === 0 && seconds * 1000 >= bound
        ? `cut: not done in ${(bound / 1000).toFixed(1)} s, the most it could take to be a fifth faster than ${chosen} at once`
        : failed && (failed.error ?? `HTTP ${failed.status}`);
    tried.push({ requests: n, ok: !failed, ...(error ? { error } : {}), tokensPerSecond });
    if (failed) break;
    if (n === 1 || tokensPerSecond >= best * WORTH) chosen = n;
    best = Math.max(best, tokensPerSecond);
  }
  return { chosen, tried };
}
