/**
 * Keeps a request inside the context window without defeating the model server's KV cache, pure.
 *
 * Ollama and llama.cpp evaluate only the part of a prompt after its longest common prefix with the
 * previous request, so nothing that changes from turn to turn may sit before the conversation's
 * tail. Folding therefore works in chunks with hysteresis: when the prompt reaches the budget (the
 * high-water mark), the oldest turns are folded into a record (record.ts) until the tail is down to
 * a low-water mark; after that the prompt only grows at its end until the next fold. The fold point
 * is kept in the thread's state, so the prefix is rewritten once per fold, not once per turn.
 *
 * The prompt is `[pinned messages if folded] [record] [tail…]` after the system prompt: the pinned
 * messages (the request, the current plan) and the record change only at a fold. If the newest
 * turns, which are never folded, are too big alone, the largest texts are clipped head-and-tail as a
 * last resort.
 *
 * On a server that moves runs of its cache into place (llama-server's `n_cache_reuse`: `shift`),
 * a fold keeps a larger tail and puts the record after it, before the newest turn:
 * `[pinned] [kept…] [record] [newest turn…]`. The kept turns are then still in the server's cache,
 * further on, and are shifted into place instead of evaluated; only the record and the newest turn
 * are new. Without shifting, the kept tail would be evaluated again, so it stays small.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { clipMiddle, replyReserve } from "../../guard/context-budget.js";
import {
  addProfile,
  COUNTED,
  emptyProfile,
  FRAME,
  tokenProfile,
  weighProfile,
  type TokenProfile,
} from "../../guard/token-estimate.js";
import { memo, prefixed } from "./prefix.js";
import { nativeOf } from "./prompt-form.js";
import { foldRecord, recordTokens, textOf, type Carried } from "./record.js";

const PER_MESSAGE = 8;
/** The newest messages are never folded (a call and its results stay together). */
const KEEP_LAST = 2;
/**
 * After a fold the tail takes at most this share of the room the record leaves: the rest is
 * headroom for the turns until the next fold (a larger share re-prefills less per fold but folds
 * more often).
 */
export const LOW_WATER = 0.2;
/**
 * The tail's share when the server shifts its cache (`FitOptions.shift`): kept turns cost nothing
 * at a fold, so more are kept and folds are smaller, and the tail stays over half the prompt, so
 * the server serves more than half of a folded prompt from its cache.
 */
export const LOW_WATER_SHIFT = 0.8;

/** Token estimate of one text with its message frame, per script class (uncalibrated). */
function profileOf(text: string): TokenProfile {
  const p = tokenProfile(text);
  p[FRAME]! += PER_MESSAGE;
  return p;
}

/**
 * The fixed text's profile (system prompt and tool schemas: the same few kilobytes every turn of a
 * run, profiled two or three times a turn), from the last few texts seen; a copy, for the caller
 * to add to.
 */
const fixedProfiles = new Map<string, TokenProfile>();
function fixedProfile(text: string): TokenProfile {
  let p = fixedProfiles.get(text);
  if (!p) {
    p = profileOf(text);
    if (fixedProfiles.size >= 8) fixedProfiles.delete(fixedProfiles.keys().next().value!);
    fixedProfiles.set(text, p);
  }
  return p.slice();
}
/**
 * Token estimate of one message, per script class (uncalibrated); a message the server counted
 * (`response_metadata.keel_tokens`, a big tool result: models/token-count.ts) at that count.
 */
const profileOfMessage = memo((m) => {
  const counted = (m.response_metadata as { keel_tokens?: unknown } | undefined)?.keel_tokens;
  if (typeof counted === "number" && counted > 0) {
    const p = emptyProfile();
    p[COUNTED] = counted;
    p[FRAME] = PER_MESSAGE;
    return p;
  }
  const calls = AIMessage.isInstance(m) && m.tool_calls?.length ? JSON.stringify(m.tool_calls) : "";
  return profileOf(textOf(m) + calls);
});
/**
 * The record's message for its text: one object while the record stays the same (it changes only
 * at a fold), so its token profile is computed once, not twice a turn (a CPU profile of turns
 * 850-1000 of a folded thread showed the record's profiling as the one cost a late turn adds).
 */
const recordMessages = new Map<string, HumanMessage>();
function recordMessage(text: string): HumanMessage {
  let m = recordMessages.get(text);
  if (!m) {
    m = new HumanMessage(text);
    if (recordMessages.size >= 8) recordMessages.delete(recordMessages.keys().next().value!);
    recordMessages.set(text, m);
  }
  return m;
}
/** Estimated tokens of `messages[0..end)`, per script class. */
const tokensUpTo = prefixed<TokenProfile>(
  () => emptyProfile(),
  (t) => t.slice(),
  (t, m) => void addProfile(t, profileOfMessage(m)),
);

export interface FitOptions {
  /** Text sent before the history (system prompt, tool schemas). */
  fixed: string;
  /** Context window in tokens (num_ctx). */
  window: number;
  /** Indices of the messages never folded or clipped (the run's request, its current plan), ascending. */
  pinned: () => number[];
  /** How many of the first messages the previous fold covered (0: none). */
  foldedUpTo: number;
  /**
   * Where the previous fold put the record: before `history[recordAt]` (default `foldedUpTo`,
   * right after the pinned messages).
   */
  recordAt?: number;
  /**
   * The server moves runs of its cached prompt into place (llama-server with `n_cache_reuse`): a
   * fold keeps more and puts the record after what it keeps (see the module comment).
   */
  shift?: boolean;
  /**
   * Server tokens per keel-estimated token of each script class (history/calibrate.ts), from the
   * server's own counts; 1 for a class when unknown.
   */
  scales?: readonly number[];
  /**
   * Tokens left free for the reply (default `replyReserve(window)`): the fold point follows it; the
   * record's shape does not (it follows the window only, see `fitToWindow`).
   */
  reserve?: number;
  /** What the record says for the messages the thread has moved out of the conversation (archive.ts). */
  carried?: Carried;
}

export interface Fitted {
  messages: BaseMessage[];
  /** The fold point to keep for the next turn. */
  foldedUpTo: number;
  /** Where the record sits (before `history[recordAt]`), when it is not at `foldedUpTo`. */
  recordAt?: number;
  /** Set when this turn folded (the prefix was rewritten) or had to clip. */
  compacted?: { folded: number; tokensBefore: number; tokensAfter: number; budget: number };
}

/** keel's estimate of a prompt, `fixed` text then `messages`, per script class (uncalibrated). */
export function promptProfile(fixed: string, messages: readonly BaseMessage[]): TokenProfile {
  const p = fixedProfile(fixed);
  for (const m of messages) addProfile(p, profileOfMessage(m));
  return p;
}

/** keel's estimate of a prompt in tokens, calibrated by `scales` (uncalibrated when absent). */
export function estimatePrompt(
  fixed: string,
  messages: readonly BaseMessage[],
  scales?: readonly number[],
): number {
  return weighProfile(promptProfile(fixed, messages), scales);
}

/** The budget for the prompt under `window`: what is left after the reply's reserve. */
export const promptBudget = (window: number, reserve = replyReserve(window)) => window - reserve;

/**
 * The smallest power-of-two window (4,096 to 2,097,152 tokens) whose prompt budget takes a prompt of
 * `tokens`, or undefined when none does: the context to advise a server too small for it.
 */
export function windowFor(tokens: number): number | undefined {
  for (let window = 4096; window <= 2 ** 21; window *= 2)
    if (tokens <= promptBudget(window)) return window;
  return undefined;
}

/**
 * Fits `history` into the window (see the module comment). Work per turn is bounded by what is
 * kept, not by the length of the thread.
 */
export function fitToWindow(history: BaseMessage[], o: FitOptions): Fitted {
  // Sizes are calibrated tokens: each message's per-class estimate weighed by the scales.
  const w = (p: readonly number[]) => weighProfile(p, o.scales);
  const sizeOf = (m: BaseMessage) => w(profileOfMessage(m));
  const upTo = (at: number) => w(tokensUpTo(history, at, 0));
  // The record's shape follows the window only: the calibration weighs the messages, and a record
  // reshaped by it (or by a turn's reserve) between folds would rewrite the prompt after the request
  // (measured on a real llama-server: a third of the breaks in the cache were such rewrites). The
  // fold point follows the reserve the turn needs.
  const shape = promptBudget(o.window);
  const budget = promptBudget(o.window, o.reserve);
  const n = history.length;
  const fixedTokens = w(fixedProfile(o.fixed));
  const total = upTo(n);
  let foldedUpTo = o.foldedUpTo > 0 && o.foldedUpTo <= n ? o.foldedUpTo : 0;
  if (foldedUpTo === 0 && !o.carried && fixedTokens + total <= budget)
    return { messages: history, foldedUpTo: 0 };

  const pinned = o.pinned().filter((i) => i >= 0 && i < n);
  const isPinned = new Set(pinned);
  const pinnedBefore = (at: number) => pinned.filter((i) => i < at);
  const tokensOf = (idx: number[]) => idx.reduce((a, i) => a + sizeOf(history[i]!), 0);
  const recordBound = recordTokens(shape);
  /** Estimated prompt size with the first `at` messages folded (record at its bound, or as given). */
  const sizeAt = (at: number, record = recordBound) =>
    fixedTokens + record + total - upTo(at) + tokensOf(pinnedBefore(at));

  let note =
    foldedUpTo || o.carried ? foldRecord(history, foldedUpTo, pinned, shape, o.carried) : undefined;
  let recordAt = Math.min(Math.max(o.recordAt ?? 0, foldedUpTo), n);
  let refolded = false;
  const folded = foldedUpTo > 0 || o.carried !== undefined;
  if (!folded || sizeAt(foldedUpTo, sizeOf(recordMessage(note ?? ""))) > budget) {
    // A new fold: keep whole groups (an assistant message and the results answering it), newest
    // first, while they fit under the low-water mark; the newest KEEP_LAST messages always stay.
    const low =
      (o.shift ? LOW_WATER_SHIFT : LOW_WATER) *
      (budget - fixedTokens - recordBound - tokensOf(pinned));
    let start = n;
    let used = 0;
    let newest: number | undefined; // where the newest turn starts: its call, before its results
    while (start > foldedUpTo) {
      let open = start - 1;
      while (open > 0 && isResult(history[open]!)) open--;
      newest ??= open;
      let tokens = 0;
      for (let i = open; i < start; i++) if (!isPinned.has(i)) tokens += sizeOf(history[i]!);
      const kept = start - 1 >= n - KEEP_LAST;
      if (!kept && used + tokens > low) break;
      used += tokens;
      start = open;
    }
    foldedUpTo = Math.max(start, foldedUpTo);
    note = foldRecord(history, foldedUpTo, pinned, shape, o.carried);
    recordAt = o.shift ? Math.max(foldedUpTo, newest ?? foldedUpTo) : foldedUpTo;
    refolded = true;
  }

  let messages = [
    ...pinnedBefore(foldedUpTo).map((i) => history[i]!),
    ...history.slice(foldedUpTo, recordAt),
    ...(note ? [recordMessage(note)] : []),
    ...history.slice(recordAt),
  ];

  // Still too big (the pinned newest turns alone): clip the largest texts, never a pinned message.
  const keep = new Set(pinned.map((i) => history[i]));
  let size = fixedTokens + messages.reduce((a, m) => a + sizeOf(m), 0);
  let clipped = false;
  for (let guard = 0; size > budget && guard < 50; guard++) {
    const biggest = messages.filter((m) => !keep.has(m)).sort((a, b) => sizeOf(b) - sizeOf(a))[0];
    if (!biggest || textOf(biggest).length < 400) break;
    const copy = clipCopy(biggest);
    messages = messages.map((m) => (m === biggest ? copy : m));
    size += sizeOf(copy) - sizeOf(biggest);
    clipped = true;
  }
  const at = recordAt > foldedUpTo ? { recordAt } : {};
  if (!refolded && !clipped) return { messages, foldedUpTo, ...at };
  return {
    messages,
    foldedUpTo,
    ...at,
    compacted: {
      folded: foldedUpTo - pinnedBefore(foldedUpTo).length + (o.carried?.messages ?? 0),
      tokensBefore: Math.round(fixedTokens + total),
      tokensAfter: Math.round(size),
      budget,
    },
  };
}

/** A tool's result, also as prompt mode shows it (a user message). */
const isResult = (m: BaseMessage) => ToolMessage.isInstance(nativeOf(m));

/** The message with its text cut in half, head and tail kept. */
function clipCopy(m: BaseMessage): BaseMessage {
  const text = textOf(m);
  const clipped = clipMiddle(text, Math.floor(text.length / 2), "call it again more narrowly");
  if (ToolMessage.isInstance(m))
    return new ToolMessage({
      content: clipped,
      tool_call_id: m.tool_call_id,
      name: m.name,
      status: m.status,
    });
  if (AIMessage.isInstance(m))
    return new AIMessage({ content: clipped, tool_calls: m.tool_calls ?? [] });
  return new HumanMessage(clipped);
}
