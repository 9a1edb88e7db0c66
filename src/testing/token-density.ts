/**
 * How the fake servers count tokens: by script and kind of text, as a real tokenizer does, pure.
 * The densities are those a real Qwen2 tokenizer gave on a real llama-server (characters per
 * token: Chinese 1.57, JSON 2.84, TypeScript 3.93, English prose 4.64), with OpenAI's cl100k for
 * what was not measured there (base64 1.38, hex 1.75, emoji about 2.5 tokens each).
 *
 * Deliberately not keel's own estimate (guard/token-estimate.ts): the fake prices each character
 * by the kind of line it sits in, keel prices pre-tokenizer runs, so a test against the fake finds
 * out whether keel's estimate holds, instead of agreeing with itself.
 */

/** Characters per token of each kind of text (Qwen2 as measured; cl100k for blobs). */
export const DENSITY = {
  cjk: 1.57,
  json: 2.84,
  code: 3.93,
  prose: 4.64,
  base64: 1.38,
  hex: 1.5,
} as const;
/** Densities by kind of text (characters per token). */
export type Density = { readonly [K in keyof typeof DENSITY]: number };

/** Tokens of one emoji code point. */
export const EMOJI_TOKENS = 2.5;

const BLOB = /[A-Za-z0-9+/=]{40,}/g;
const CJK = /[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/;

/** The kind of one line that holds no CJK and no blob. */
function lineDensity(line: string, d: Density): number {
  const t = line.trim();
  if (/^[[{]/.test(t) && /"\s*:/.test(t)) return d.json;
  if (/"[\w-]+"\s*:/.test(t) && (t.match(/[{}[\],:"]/g)?.length ?? 0) > t.length / 8) return d.json;
  if (/^\s{2,}\S/.test(line) || /[;{}()=<>]|=>|\/\/|^(import|export|const|let|function)\b/.test(t))
    return d.code;
  return d.prose;
}

/**
 * Tokens per character of `text`, in order (the sum is the count): each character weighs the
 * inverse density of its kind (`d`: Qwen2's unless another tokenizer's is given); an emoji's weight
 * sits on its first code unit.
 */
export function tokenWeights(text: string, d: Density = DENSITY): Float64Array {
  const w = new Float64Array(text.length);
  let start = 0;
  for (const line of text.split("\n")) {
    const base = 1 / lineDensity(line, d);
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff) w[start + i] = EMOJI_TOKENS;
      else if (c >= 0xdc00 && c <= 0xdfff) w[start + i] = 0;
      else if (CJK.test(line[i]!)) w[start + i] = 1 / d.cjk;
      else w[start + i] = base;
    }
    for (const m of line.matchAll(BLOB)) {
      if (!/\d/.test(m[0]) || !/[A-Za-z]/.test(m[0])) continue;
      const blob = /^[0-9a-f]+$/i.test(m[0]) ? d.hex : d.base64;
      for (let i = 0; i < m[0].length; i++) w[start + m.index + i] = 1 / blob;
    }
    // the newline itself
    if (start + line.length < text.length) w[start + line.length] = 1 / d.code;
    start += line.length + 1;
  }
  return w;
}

/** The tokens of `text` as the fake's tokenizer counts them (0 for ""). */
export function countTokens(text: string, d: Density = DENSITY): number {
  let sum = 0;
  for (const x of tokenWeights(text, d)) sum += x;
  return Math.ceil(sum);
}

/**
 * What a server keeps of an over-long prompt: the first `head` tokens and the last `tail`, as
 * text (Ollama's runner keeps the first few tokens and the newest `num_ctx/2 + 2 - head`).
 */
export function keepHeadAndTail(
  text: string,
  head: number,
  tail: number,
  d: Density = DENSITY,
): string {
  const w = tokenWeights(text, d);
  let a = 0;
  for (let sum = 0; a < text.length && sum + w[a]! <= head; a++) sum += w[a]!;
  let b = text.length;
  for (let sum = 0; b > a && sum + w[b - 1]! <= tail; b--) sum += w[b - 1]!;
  return text.slice(0, a) + text.slice(b);
}
