/**
 * The context budget (local models truncate silently: Ollama drops the start of a prompt that does
 * not fit num_ctx, and the system prompt and tool schemas go first). Pure estimates and limits;
 * the act node's `fitToWindow` applies them.
 */

/** Characters per token keel assumes for code-heavy English (conservative). */
export const CHARS_PER_TOKEN = 3.5;

/** A conservative token estimate (`CHARS_PER_TOKEN`). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** What keel leaves free for the model's answer. */
export function replyReserve(window: number): number {
  return Math.min(4096, Math.floor(window / 4));
}

/** The most characters one tool result may keep: a quarter of the window. */
export function toolResultLimit(window: number): number {
  return Math.min(16_000, Math.max(1_000, window));
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
