/**
 * Text tool-call parsing throughput per family: parses per second of the format's own sample
 * (`callsPerSecond`), and of the family's cases in keel's corpus (`corpusPerSecond`: variants,
 * drift, lists with a bad entry; the negatives as their own row), with the tools' schemas.
 */
import { performance } from "node:perf_hooks";
import { parseToolCalls } from "../src/models/tool-calls/index.js";
import { FORMATS } from "../src/models/tool-calls/formats.js";
import { CORPUS, CORPUS_SCHEMAS } from "../test/fixtures/tool-call-corpus.js";

/** Parses per second of `texts`, each parsed in turn for about 250 ms. */
function rate(texts: string[], options: Parameters<typeof parseToolCalls>[1] = {}): number {
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 250) {
    for (let i = 0; i < 100; i++) parseToolCalls(texts[i % texts.length]!, options);
    n += 100;
  }
  return Math.round(n / ((performance.now() - t0) / 1000));
}

export function benchParsers(): Record<
  string,
  { callsPerSecond?: number; corpusPerSecond?: number }
> {
  const out: Record<string, { callsPerSecond?: number; corpusPerSecond?: number }> = {};
  for (const { name: format, sample: text } of FORMATS) {
    if (parseToolCalls(text).calls.length === 0)
      throw new Error(`sample for ${format} does not parse`);
    out[format] = { callsPerSecond: rate([text]) };
  }
  const families = [...new Set(CORPUS.map((c) => c.family))];
  for (const family of families) {
    const texts = CORPUS.filter((c) => c.family === family && !c.toolNames).map((c) => c.text);
    if (texts.length)
      out[family] = { ...out[family], corpusPerSecond: rate(texts, { schemas: CORPUS_SCHEMAS }) };
  }
  return out;
}
