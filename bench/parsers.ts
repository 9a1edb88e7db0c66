/** Text tool-call parsing throughput per format. */
import { performance } from "node:perf_hooks";
import { parseToolCalls } from "../src/models/tool-calls/index.js";
import { FORMATS } from "../src/models/tool-calls/formats.js";

export function benchParsers(): Record<string, { callsPerSecond: number }> {
  const out: Record<string, { callsPerSecond: number }> = {};
  for (const { name: format, sample: text } of FORMATS) {
    if (parseToolCalls(text).calls.length === 0)
      throw new Error(`sample for ${format} does not parse`);
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < 250) {
      for (let i = 0; i < 100; i++) parseToolCalls(text);
      n += 100;
    }
    out[format] = { callsPerSecond: Math.round(n / ((performance.now() - t0) / 1000)) };
  }
  return out;
}
