/**
 * llama-server's slots as the fake models them (measured on a real llama-server, and read in its
 * source: server-context.cpp `get_available_slot`, server-task.cpp `server_prompt_cache`):
 * N slots (4 by default), each holding the tokens of its last prompt and reply, and a prompt
 * cache in RAM (`--cache-ram`, on by default) that keeps the prompts slots gave up.
 *
 * - A request goes to the slot it names (`id_slot`), or to the slot whose held text shares the
 *   longest prefix with its prompt, if that prefix is more than `similarity` (0.1) of the prompt;
 *   otherwise to the least recently used slot.
 * - When the slot was picked that way, or would keep less than half of what it holds, it is first
 *   saved to the prompt cache, and the cached prompt that keeps more of itself (at least a quarter)
 *   and more of the request than the slot does is loaded into it (and leaves the cache).
 * - When a request starts, every other slot is saved to the cache (`--cache-idle-slots`); with the
 *   server's default slots (one unified KV cache) also cleared: between requests one slot holds
 *   text, the cache the rest.
 * - With `n_cache_reuse` (`take`'s `reuse`), runs of the held text found further on that match the
 *   prompt after the shared prefix are reused too, in order, as llama-server's chunk reuse shifts
 *   them.
 *
 * Tokens are counted with the fakes' tokenizer; the cache keeps its newest 64 prompts (the real one
 * is bounded by bytes, 8 GiB by default).
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

/** Prompts the fake's prompt cache keeps (the real one: 8 GiB of KV state by default). */
const CACHED_PROMPTS = 64;

/** The slots of one fake llama-server. */
export class Slots {
  private readonly held: string[];
  private readonly used: number[];
  /** The prompt cache in RAM, oldest first. */
  private readonly cache: string[] = [];
  private clock = 0;

  private readonly similarity: number;
  private readonly unified: boolean;

  /**
   * `count` is the tokenizer (default the fakes' one); `similarity` llama.cpp's
   * `--slot-prompt-similarity` (0.1); `unified`, one KV cache for all slots (llama-server's default
   * when `-np` is not given): idle slots are saved to the prompt cache and cleared.
   */
  constructor(
    slots: number,
    private readonly count: (text: string) => number = countTokens,
    o: { similarity?: number; unified?: boolean } = {},
  ) {
    this.similarity = o.similarity ?? 0.1;
    this.unified = o.unified ?? false;
    this.held = Array.from({ length: Math.max(1, slots) }, () => "");
    this.used = this.held.map(() => 0);
  }

  /**
   * Picks a slot for `prompt` (the rendered text) and accounts its cache reuse; `reuse` is the
   * request's `n_cache_reuse` (0: the shared prefix only), `idSlot` its `id_slot`: that slot,
   * whatever it holds — and an empty one loads nothing from the prompt cache (llama-server's keep
   * fraction is 0/0 there, and not under a half).
   */
  take(prompt: string, reuse = 0, idSlot?: number): SlotAccount {
    const promptTokens = this.count(prompt);
    const asked = idSlot === undefined ? undefined : idSlot % this.held.length;
    let slot = asked ?? -1;
    let sharedTokens = 0;
    this.held.forEach((h, i) => {
      // (the server compares the id as sent: one past the slots matches none, and its slot is refreshed)
      if (!h || (idSlot !== undefined && i !== idSlot)) return;
      const n = this.count(prompt.slice(0, commonPrefix(h, prompt)));
      if (n > sharedTokens && n > this.similarity * promptTokens) [slot, sharedTokens] = [i, n];
    });
    let refresh = true;
    if (slot >= 0) {
      const size = this.count(this.held[slot]!);
      refresh = size > 0 && sharedTokens < 0.5 * size;
    } else slot = this.leastRecentlyUsed();
    if (refresh) {
      this.save(this.held[slot]!);
      this.load(slot, prompt, promptTokens);
    }
    const shared = commonPrefix(this.held[slot]!, prompt);
    const moved = reuse > 0 ? this.shifted(this.held[slot]!, prompt, shared, reuse) : 0;
    // A prompt that is all cached still evaluates its last token (llama.cpp keeps one to sample from).
    const cachedTokens = Math.min(this.count(prompt.slice(0, shared)) + moved, promptTokens - 1);
    this.held[slot] = prompt;
    this.used[slot] = ++this.clock;
    // Every other slot is saved to the prompt cache; on one KV cache, also cleared.
    this.held.forEach((h, i) => {
      if (i === slot) return;
      this.save(h);
      if (this.unified) this.held[i] = "";
    });
    return { slot, promptTokens, cachedTokens: Math.max(0, cachedTokens) };
  }

  /** Saves a slot's text to the prompt cache, unless a cached prompt holds it all; drops those it holds all of. */
  private save(text: string): void {
    if (!text || this.cache.some((c) => c.startsWith(text))) return;
    for (let i = this.cache.length - 1; i >= 0; i--)
      if (text.startsWith(this.cache[i]!)) this.cache.splice(i, 1);
    this.cache.push(text);
    if (this.cache.length > CACHED_PROMPTS) this.cache.shift();
  }

  /**
   * Loads into `slot` the cached prompt that keeps more of itself (a quarter at least) and more of
   * `prompt` than the slot's own text does; it leaves the cache.
   */
  private load(slot: number, prompt: string, promptTokens: number): void {
    const own = this.held[slot]!;
    const lcp = this.count(prompt.slice(0, commonPrefix(own, prompt)));
    let keepBest = own ? lcp / this.count(own) : -1;
    let simBest = lcp / promptTokens;
    let pick = -1;
    this.cache.forEach((c, i) => {
      const n = this.count(prompt.slice(0, commonPrefix(c, prompt)));
      const keep = n / this.count(c);
      const sim = n / promptTokens;
      if (keep >= 0.25 && keep > keepBest && sim > simBest)
        [keepBest, simBest, pick] = [keep, sim, i];
    });
    if (pick >= 0) this.held[slot] = this.cache.splice(pick, 1)[0]!;
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

  /** The least recently used slot, the last of equals (as llama-server picks it). */
  private leastRecentlyUsed(): number {
    let pick = 0;
    this.used.forEach((u, i) => {
      if (u <= this.used[pick]!) pick = i;
    });
    return pick;
  }
}
