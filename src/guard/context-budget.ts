/**
 * The context budget (local models truncate silently: Ollama drops the start of a prompt that does
 * not fit num_ctx, and the system prompt and tool schemas go first). Pure estimates and the
 * compaction plan; the act node applies them.
 */

/** A conservative token estimate: ~3.5 characters per token for code-heavy English. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3.5);
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

/** One message as the budget sees it. */
export interface Sized {
  tokens: number;
  /** Messages that must stay together (an assistant's calls and their results) share a group. */
  group: number;
  /** Never dropped: the request and the newest turns. */
  pinned: boolean;
}

/**
 * Chooses which messages to fold into a compact record so the prompt fits: the oldest unpinned
 * groups go first. Returns the indexes to fold (empty if everything fits).
 */
export function planCompaction(
  messages: readonly Sized[],
  fixedTokens: number,
  budget: number,
): number[] {
  let total = fixedTokens;
  const groups = new Map<number, number[]>();
  messages.forEach((m, i) => {
    total += m.tokens;
    const members = groups.get(m.group);
    if (members) members.push(i);
    else groups.set(m.group, [i]);
  });
  if (total <= budget) return [];
  const fold: number[] = [];
  for (const members of groups.values()) {
    if (total <= budget) break;
    if (members.some((i) => messages[i]!.pinned)) continue;
    for (const i of members) {
      fold.push(i);
      total -= messages[i]!.tokens;
    }
  }
  return fold;
}
