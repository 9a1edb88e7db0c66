/**
 * A script-aware token estimate, pure and fast (it runs on every message keel sends). Text is cut
 * into the runs a BPE pre-tokenizer makes — ASCII words, digits, punctuation, whitespace, CJK
 * characters, emoji, other scripts, and long base64/hex blobs — and each run is priced by its own
 * class. Prose, code and JSON differ by their mix of these runs: the same prices give English
 * about 4 characters per token, TypeScript about 3.3, minified JSON about 2.3, Chinese 1, a
 * base64 blob 1.1.
 *
 * The prices are conservative: above the counts of the tokenizers measured here (a real Qwen2
 * tokenizer: English 4.64 characters per token, TypeScript 3.93, JSON 2.84, Chinese 1.57;
 * OpenAI's cl100k: base64 1.38, hex 1.75, emoji 2–4 tokens each), so a prompt keel thinks
 * fits does fit before any calibration. A tokenizer that splits finer (byte fallback for rare
 * CJK characters) is learned per class from the server's own counts (coder/history/calibrate.ts).
 */

/** The run classes, in the order of a `TokenProfile`'s entries. */
export const TOKEN_CLASSES = [
  "word",
  "digit",
  "symbol",
  "space",
  "cjk",
  "emoji",
  "script",
  "blob",
  "frame",
  /** Tokens the model server counted itself (models/token-count.ts): exact, never calibrated. */
  "counted",
] as const;
export type TokenClass = (typeof TOKEN_CLASSES)[number];

/** Estimated tokens per class (indexed as `TOKEN_CLASSES`). */
export type TokenProfile = number[];

const I = Object.fromEntries(TOKEN_CLASSES.map((c, i) => [c, i])) as Record<TokenClass, number>;

/** Letters per token of an ASCII word: a word up to 4 letters is one token, 5–8 two. */
const WORD_LETTERS = 4;
/** Punctuation characters per token (`":"`, `=>`, `();` merge in BPE vocabularies). */
const SYMBOLS_PER_TOKEN = 2;
/** Tokens per CJK character (Qwen2 needs 0.64; byte-fallback tokenizers more, learned). */
const CJK_TOKEN = 1;
/** Tokens per astral code point (emoji: UTF-8 4 bytes; byte-level BPE needs 2–4). */
const EMOJI_TOKENS = 4;
/** Tokens per joiner, variation selector or BMP pictograph (✨, ☀) of an emoji sequence. */
const EMOJI_PART_TOKENS = 2;
/** Tokens per character of another script (Cyrillic, Greek, Arabic, accented Latin). */
const SCRIPT_TOKEN = 0.6;
/** Tokens per character of a base64/hex blob (cl100k: 0.72 base64, 0.57 hex; Qwen2 splits digits). */
const BLOB_TOKEN = 0.9;

/** A long run of base64 or hex: no spaces, letters and digits mixed. */
const BLOB = /[A-Za-z0-9+/_-]{40,}={0,2}/g;
const isBlob = (s: string) => /\d/.test(s) && /[A-Za-z]/.test(s) && !/^[a-z_-]+\d{0,4}$/i.test(s);

/** An empty profile. */
export const emptyProfile = (): TokenProfile => TOKEN_CLASSES.map(() => 0);

/**
 * Adds `text`'s estimated tokens per class to `into` (a new profile when absent) and returns it.
 * Never under 0; the empty string adds nothing.
 */
export function tokenProfile(text: string, into: TokenProfile = emptyProfile()): TokenProfile {
  let from = 0;
  if (text.length >= 40) {
    for (const m of text.matchAll(BLOB)) {
      if (!isBlob(m[0])) continue;
      scanRuns(text, from, m.index, into);
      into[I.blob]! += m[0].length * BLOB_TOKEN;
      from = m.index + m[0].length;
    }
  }
  scanRuns(text, from, text.length, into);
  return into;
}

const isLetter = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
const isDigit = (c: number) => c >= 48 && c <= 57;
const isSpace = (c: number) => c === 32 || c === 10 || c === 9 || c === 13;
/** Han, kana, Hangul, CJK punctuation and full-width forms (BMP). */
const isCjk = (c: number) =>
  (c >= 0x3000 && c <= 0x30ff) ||
  (c >= 0x3400 && c <= 0x4dbf) ||
  (c >= 0x4e00 && c <= 0x9fff) ||
  (c >= 0xac00 && c <= 0xd7af) ||
  (c >= 0x1100 && c <= 0x11ff) ||
  (c >= 0xf900 && c <= 0xfaff) ||
  (c >= 0xff00 && c <= 0xffef);

/** Prices the runs of `text[from, to)` into `p`. */
function scanRuns(text: string, from: number, to: number, p: TokenProfile): void {
  let i = from;
  while (i < to) {
    const c = text.charCodeAt(i);
    if (isLetter(c)) {
      let j = i + 1;
      while (j < to && isLetter(text.charCodeAt(j))) j++;
      p[I.word]! += Math.ceil((j - i) / WORD_LETTERS);
      i = j;
    } else if (isDigit(c)) {
      let j = i + 1;
      while (j < to && isDigit(text.charCodeAt(j))) j++;
      p[I.digit]! += j - i;
      i = j;
    } else if (isSpace(c)) {
      let j = i + 1;
      while (j < to && isSpace(text.charCodeAt(j))) j++;
      // One space before a word belongs to the word's token; any other run is a token of its own.
      if (!(j - i === 1 && c === 32)) p[I.space]! += 1 + Math.floor((j - i) / 16);
      i = j;
    } else if (c < 128) {
      let j = i + 1;
      while (j < to) {
        const d = text.charCodeAt(j);
        if (d >= 128 || isLetter(d) || isDigit(d) || isSpace(d)) break;
        j++;
      }
      p[I.symbol]! += Math.ceil((j - i) / SYMBOLS_PER_TOKEN);
      i = j;
    } else if (c >= 0xd800 && c <= 0xdbff) {
      // An astral code point: emoji and pictographs (also CJK extension B, priced the same or lower).
      p[I.emoji]! += EMOJI_TOKENS;
      i += 2;
    } else if (isCjk(c)) {
      p[I.cjk]! += CJK_TOKEN;
      i++;
    } else if (c === 0x200d || (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0x2600 && c <= 0x27bf)) {
      // Zero-width joiners, variation selectors and BMP symbols (✨, ☀) of emoji sequences.
      p[I.emoji]! += EMOJI_PART_TOKENS;
      i++;
    } else {
      p[I.script]! += SCRIPT_TOKEN;
      i++;
    }
  }
}

/** The profile's tokens, each class weighed by `scales` (1 where absent; the server's own counts always 1). */
export function weighProfile(p: readonly number[], scales?: readonly number[]): number {
  let sum = 0;
  for (let k = 0; k < p.length; k++) sum += p[k]! * (k === I.counted ? 1 : (scales?.[k] ?? 1));
  return sum;
}

/** Adds `b` into `a` (same length) and returns `a`. */
export function addProfile(a: TokenProfile, b: readonly number[]): TokenProfile {
  for (let k = 0; k < a.length; k++) a[k]! += b[k] ?? 0;
  return a;
}

/** A conservative token estimate of `text` (uncalibrated). */
export function estimateTokens(text: string): number {
  return Math.ceil(weighProfile(tokenProfile(text)));
}

/** The `frame` class index: per-message template overhead (role markers). */
export const FRAME = I.frame;
/** The `counted` class index: tokens the server counted itself. */
export const COUNTED = I.counted;

/**
 * The longest head of `text` whose estimate stays within `tokens` (a clip that respects the
 * script: 1,000 tokens are 4,000 characters of English, 1,000 of Chinese).
 */
export function headWithin(text: string, tokens: number): string {
  if (estimateTokens(text) <= tokens) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (estimateTokens(text.slice(0, mid)) <= tokens) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, lo);
}

/** The longest tail of `text` whose estimate stays within `tokens`. */
export function tailWithin(text: string, tokens: number): string {
  if (estimateTokens(text) <= tokens) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (estimateTokens(text.slice(text.length - mid)) <= tokens) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(text.length - lo);
}
