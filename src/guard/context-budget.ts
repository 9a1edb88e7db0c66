/**
 * The context budget (local models truncate silently: Ollama drops the start of a prompt that does
 * not fit num_ctx, and the system prompt and tool schemas go first). Pure estimates and limits;
 * the act node's `fitToWindow` applies them.
 */

import { estimateTokens, headWithin, tailWithin } from "./token-estimate.js";

export { estimateTokens } from "./token-estimate.js";

/**
 * Characters per token keel assumes for code-heavy English (conservative), where a budget must be
 * in characters; token counts come from the script-aware estimate (token-estimate.ts).
 */
export const CHARS_PER_TOKEN = 3.5;

/**
 * What keel leaves free for the model's answer, as a rule: an eighth of the window (1,024 tokens at
 * 8K; at most 4,096). Every token reserved is one the prompt cannot grow into before it folds, and
 * each fold re-evaluates the prompt after the fixed prefix: on a real llama-server an eighth took
 * 80.1% → 82.8% of the prompt tokens from the cache over 80 reads at 8K (12 → 10 folds) against a
 * quarter. Most act replies are tool calls of a few dozen tokens; the one that needs more — a whole
 * file written — and is cut by the end of the context gets `roomyReserve` and is asked again.
 */
export function replyReserve(window: number): number {
  return Math.min(4096, Math.floor(window / 8));
}

/**
 * The reserve of a turn asked again after the end of the context cut its reply: as much as the
 * call's generation budget, up to half the window.
 */
export function roomyReserve(window: number, budget: number): number {
  return Math.max(replyReserve(window), Math.min(budget, Math.floor(window / 2)));
}

/**
 * Whether a reply cut at `length` was stopped by the end of the context rather than its budget: its
 * prompt and reply together filled the window (the server's counts; a few tokens of slack for
 * what a server adds).
 */
export function cutByContext(
  prompt: number | undefined,
  generated: number | undefined,
  window: number,
  budget: number,
): boolean {
  if (prompt === undefined || generated === undefined || generated >= budget) return false;
  return prompt + generated >= window - 16;
}

/** The most characters one tool result may keep: a quarter of the window. */
export function toolResultLimit(window: number): number {
  return Math.min(16_000, Math.max(1_000, window));
}

/** The most tokens one tool result may keep: as many as its characters of English would make. */
export function toolResultTokens(window: number): number {
  return Math.floor(toolResultLimit(window) / CHARS_PER_TOKEN);
}

/**
 * A tool result within the window's limits in characters and in estimated tokens (dense text —
 * CJK, blobs — reaches the token limit long before the character limit): head and tail kept.
 */
export function clipResult(text: string, window: number): string {
  const chars = clipMiddle(text, toolResultLimit(window));
  const tokens = toolResultTokens(window);
  if (estimateTokens(chars) <= tokens) return chars;
  const half = Math.floor((tokens - 60) / 2);
  const head = headWithin(chars, half);
  const tail = tailWithin(chars.slice(head.length), half);
  return `${head}\n[... keel cut ${chars.length - head.length - tail.length} characters from the middle to fit the context; narrow the call (offset/limit, a subfolder, a pattern) to see them ...]\n${tail}`;
}

/** Keeps head and tail of an oversized text, saying how much was cut and how to see it. */
export function clipMiddle(
  text: string,
  limit: number,
  how = "narrow the call (offset/limit, a subfolder, a pattern)",
): string {
  if (text.length <= limit) return text;
  const half = Math.floor((limit - 120) / 2);
  return `${text.slice(0, half)}\n[... keel cut ${text.length - 2 * half} characters from the middle to fit the context; ${how} to see them ...]\n${text.slice(-half)}`;
}
