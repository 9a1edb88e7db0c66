/**
 * keel's script-aware token estimate: its speed (it runs on every message keel sends) and how far
 * over the fakes' Qwen2-like count it lands for each kind of text (over is safe; under would let a
 * prompt past the window).
 */
import { performance } from "node:perf_hooks";
import { estimateTokens } from "../src/guard/token-estimate.js";
import { countTokens } from "../src/testing/tokens.js";
import {
  base64Blob,
  chineseLines,
  EMOJI,
  hexBlob,
  minifiedJson,
  PROSE,
  TYPESCRIPT,
} from "../test/support/texts.js";

export function benchTokenEstimate(): Record<
  string,
  { chars: number; mbPerSecond: number; overCount: number; oldGuessOverCount: number }
> {
  const kinds: Record<string, string> = {
    chinese: chineseLines(450),
    json: minifiedJson(300),
    base64: base64Blob(12_000),
    hex: hexBlob(6_000),
    typescript: TYPESCRIPT.repeat(30),
    prose: PROSE.repeat(40),
    emoji: EMOJI.repeat(60),
  };
  const out: ReturnType<typeof benchTokenEstimate> = {};
  for (const [name, text] of Object.entries(kinds)) {
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < 200) {
      estimateTokens(text);
      n++;
    }
    const seconds = (performance.now() - t0) / 1000;
    const real = countTokens(text);
    out[name] = {
      chars: text.length,
      mbPerSecond: Math.round(((n * text.length) / 1e6 / seconds) * 10) / 10,
      overCount: Math.round((estimateTokens(text) / real) * 100) / 100,
      oldGuessOverCount: Math.round((Math.ceil(text.length / 3.5) / real) * 100) / 100,
    };
  }
  return out;
}
