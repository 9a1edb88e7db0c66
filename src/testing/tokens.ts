/**
 * The fakes' token count: an approximation of a byte-level BPE tokenizer (Qwen2's, as llama-server
 * and Ollama count) small enough to read. Text is split the way Qwen2's pre-tokenizer splits it
 * (words with their leading space or symbol, single digits, runs of symbols, runs of white space),
 * and each piece costs what BPE typically makes of it. On the contract suite's samples it counts
 * within 1% of the real Qwen2 tokenizer (llama-server's /tokenize, docs/real-servers.md): English
 * prose ~4.6 characters per token, TypeScript ~4.1, JSON ~3.0, Chinese ~1.6.
 */

/**
 * Qwen2's pre-tokenizer split (without its case-insensitive contraction group), after the special
 * tokens of a chat template (`<|im_start|>`, `<tool_call>`…), each of which is one token.
 */
const PIECE =
  /<\|[a-z_]+\|>|<\/?tool_call>|'(?:s|t|re|ve|m|ll|d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

const SPECIAL = /^(?:<\|[a-z_]+\|>|<\/?tool_call>)$/;

/**
 * A tokenizer other than Qwen2's, where a test needs one: characters per token of CJK text (e.g.
 * 0.5 for a byte-fallback tokenizer that spends two tokens on a Han character).
 */
export interface TokenizerOptions {
  cjk?: number;
}

/** Han, kana and hangul: BPE merges them about 1.6 characters to a token. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * What one pre-token costs. The constants were fitted to the real Qwen2 tokenizer on the contract
 * suite's samples (test/contract/samples.ts): words of up to nine letters are one token, runs of
 * symbols merge three to a token, Han/kana/hangul 1.8 characters to a token.
 */
function pieceTokens(piece: string, o: TokenizerOptions = {}): number {
  if (SPECIAL.test(piece)) return 1;
  if (CJK.test(piece)) {
    let cjk = 0;
    for (const ch of piece) if (CJK.test(ch)) cjk++;
    return Math.ceil(cjk / (o.cjk ?? 1.8)) + (piece.length - cjk > 0 ? 1 : 0);
  }
  if (/\p{L}/u.test(piece)) {
    const letters = piece.length - (/\p{L}/u.test(piece[0]!) ? 0 : 1);
    return Math.max(1, Math.ceil(letters / 9));
  }
  if (/^\s+$/u.test(piece)) return piece.includes("\n") ? 1 : Math.ceil(piece.length / 4);
  if (/\p{N}/u.test(piece)) return 1;
  return Math.ceil(piece.trim().length / 3) || 1;
}

/** How many tokens the fakes count for `text`. Pure; 0 for the empty string. */
export function countTokens(text: string, o: TokenizerOptions = {}): number {
  let total = 0;
  for (const m of text.matchAll(PIECE)) total += pieceTokens(m[0], o);
  return Math.round(total);
}

/**
 * The longest prefix of `text` that fits in `budget` tokens, by the same count: what a server
 * has generated when it stops at `max_tokens` or at the end of its context.
 */
export function cutToTokens(text: string, budget: number, o: TokenizerOptions = {}): string {
  if (budget <= 0) return "";
  let total = 0;
  let end = 0;
  for (const m of text.matchAll(PIECE)) {
    const cost = pieceTokens(m[0], o);
    if (Math.round(total + cost) > budget) break;
    total += cost;
    end = m.index + m[0].length;
  }
  return text.slice(0, end);
}

/** The longest suffix of `text` that fits in `budget` tokens (what a front truncation keeps). */
export function tailToTokens(text: string, budget: number, o: TokenizerOptions = {}): string {
  const pieces = [...text.matchAll(PIECE)];
  let total = 0;
  let start = text.length;
  for (let i = pieces.length - 1; i >= 0; i--) {
    const cost = pieceTokens(pieces[i]![0], o);
    if (Math.round(total + cost) > budget) break;
    total += cost;
    start = pieces[i]!.index;
  }
  return text.slice(start);
}
