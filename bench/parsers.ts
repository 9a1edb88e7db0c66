/**
 * Text tool-call parsing throughput per family: parses per second of the format's own sample
 * (`callsPerSecond`), and of the family's cases in keel's corpus (`corpusPerSecond`: variants,
 * drift, lists with a bad entry; the negatives as their own row), with the tools' schemas.
 */
import { parseToolCalls } from "../src/models/tool-calls/index.js";
import { FORMATS } from "../src/models/tool-calls/formats.js";
import { CORPUS, CORPUS_SCHEMAS } from "../test/fixtures/tool-call-corpus.js";

/**
 * Parses per second of `texts`, each parsed in turn: the best of three rounds of 1,000 parses, on
 * the process's CPU time (the machine may be shared: wall time would count others' turns).
 */
function rate(texts: string[], options: Parameters<typeof parseToolCalls>[1] = {}): number {
  const n = 1000;
  let best = 0;
  for (let round = 0; round < 3; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) parseToolCalls(texts[i % texts.length]!, options);
    const used = process.cpuUsage(before);
    best = Math.max(best, n / ((used.user + used.system) / 1e6));
  }
  return Math.round(best);
}

export function benchParsers(): Record<
  string,
  { callsPerSecond?: number; corpusPerSecond?: number }
> {
  const out: Record<string, { callsPerSecond?: number; corpusPerSecond?: number }> = {};
  // Every reader compiled and optimised before any is timed (else the first timed pay for it).
  const all = [...FORMATS.map((f) => f.sample), ...CORPUS.map((c) => c.text)];
  for (let i = 0; i < 50 * all.length; i++)
    parseToolCalls(all[i % all.length]!, { schemas: CORPUS_SCHEMAS });
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
