/**
 * llama-server's slots as the fake models them (measured on a real llama-server, docs/real-servers.md):
 * N slots (4 by default), each holding the tokens of its last prompt and reply. A request goes to
 * the slot whose held text shares the longest prefix with its prompt, if that prefix is at least
 * more than `similarity` (0.1) of the prompt; otherwise to the least recently used slot (an empty one first),
 * where it reuses what it happens to share. With `n_cache_reuse` (`take`'s `reuse`), runs of the
 * held text found further on that match the prompt after the shared prefix are reused too, in
 * order, as llama-server's chunk reuse shifts them (server-context.cpp). Tokens are counted with
 * the fakes' tokenizer.
 */
import { countTokens } from "../tokens.js";

/** What one request found in the slots. */
export interface SlotAccount {
  /** The slot the request was given. */
  slot: number;
  /** Tokens of the prompt (as the server counts `usage.prompt_tokens`). */
  promptTokens: number;
  /** Tokens of the prompt served from the slot's cache (`cached_tokens`, `timings.cache_n`). */
  cachedTokens: number;
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** The slots of one fake llama-server. */
export class Slots {
  private readonly held: string[];
  private readonly used: number[];
  private clock = 0;

  /** `count` is the tokenizer (default the fakes' one); `similarity` llama.cpp's `--slot-prompt-similarity`. */
  constructor(
    slots: number,
    private readonly count: (text: string) => number = countTokens,
    private readonly similarity = 0.1,
  ) {
    this.held = Array.from({ length: Math.max(1, slots) }, () => "");
    this.used = this.held.map(() => 0);
  }

  /**
   * Picks a slot for `prompt` (the rendered text) and accounts its cache reuse; `reuse` is the
   * request's `n_cache_reuse` (0: the shared prefix only).
   */
  take(prompt: string, reuse = 0): SlotAccount {
    const promptTokens = this.count(prompt);
    let best = -1;
    let bestShare = 0;
    this.held.forEach((h, i) => {
      const shared = commonPrefix(h, prompt);
      if (h && shared > bestShare) [best, bestShare] = [i, shared];
    });
    const similar =
      best >= 0 && this.count(prompt.slice(0, bestShare)) > this.similarity * promptTokens;
    const slot = similar ? best : this.leastRecentlyUsed();
    const shared = commonPrefix(this.held[slot]!, prompt);
    const moved = reuse > 0 ? this.shifted(this.held[slot]!, prompt, shared, reuse) : 0;
    // A prompt that is all cached still evaluates its last token (llama.cpp keeps one to sample from).
    const cachedTokens = Math.min(this.count(prompt.slice(0, shared)) + moved, promptTokens - 1);
    this.held[slot] = prompt;
    this.used[slot] = ++this.clock;
    return { slot, promptTokens, cachedTokens: Math.max(0, cachedTokens) };
  }

  /** The slot now also holds what was generated after its prompt. */
  generated(slot: number, text: string): void {
    this.held[slot] += text;
  }

  /** What each slot holds, for `/slots`. */
  view(): Array<{ id: number; tokens: number }> {
    return this.held.map((h, id) => ({ id, tokens: this.count(h) }));
  }

  /**
   * Tokens of the runs after the shared prefix that llama-server's chunk reuse would shift into
   * place: walking the held text, a run matching the prompt's next text of at least `reuse` tokens
   * is taken and both move past it; otherwise the held side moves on. The prompt's side never
   * skips: the first text of the prompt not found further on in the held text ends the reuse.
   */
  private shifted(held: string, prompt: string, from: number, reuse: number): number {
    let c = from;
    let p = from;
    let tokens = 0;
    while (c < held.length && p < prompt.length) {
      // A run of `reuse` tokens is at least `reuse` characters: jump to where its start occurs.
      const next = held.indexOf(prompt.slice(p, p + Math.min(reuse, 16)), c);
      if (next < 0) break;
      c = next;
      const run = commonPrefix(held.slice(c), prompt.slice(p));
      const runTokens = this.count(prompt.slice(p, p + run));
      if (runTokens >= reuse) {
        tokens += runTokens;
        c += run;
        p += run;
      } else c += 1;
    }
    return tokens;
  }

  private leastRecentlyUsed(): number {
    let pick = 0;
    this.used.forEach((u, i) => {
      if (u < this.used[pick]!) pick = i;
    });
    return pick;
  }
}
