/**
 * Text tool-call parsing against the reply's size: milliseconds (CPU, the best of three) to parse
 * replies of 10 KB, 100 KB and 1 MB side by side, for replies full of distinct calls (the 1 MB
 * Hermes reply holds over 10,000) and for the shapes an attacker or a broken server sends (markup
 * left open, calls cut short, brackets nested deep). Linear parsing keeps each row's 1 MB figure
 * near ten times its 100 KB one. `npm run bench:parser` runs it alone; `npm run bench` includes it.
 */
import { pathToFileURL } from "node:url";
import { parseToolCalls } from "../src/models/tool-calls/index.js";
import { FORMATS } from "../src/models/tool-calls/formats.js";

const SIZES = [10_000, 100_000, 1_000_000] as const;

const fill = (unit: string, size: number) =>
  unit.repeat(Math.max(1, Math.round(size / unit.length)));
const distinct = (size: number, call: (i: number) => string) => {
  const parts: string[] = [];
  for (let i = 0, n = 0; n < size; i++) {
    parts.push(call(i));
    n += parts.at(-1)!.length + 1;
  }
  return parts.join("\n");
};
const sample = (name: string) => FORMATS.find((f) => f.name === name)!.sample;

/** Each reply shape, made to a size. */
export const SHAPES: Record<string, (size: number) => string> = {
  "Hermes, distinct calls": (n) =>
    distinct(
      n,
      (i) => `<tool_call>{"name": "read_file", "arguments": {"path": "src/f${i}.ts"}}</tool_call>`,
    ),
  "Qwen3-Coder XML, distinct calls": (n) =>
    distinct(
      n,
      (i) =>
        `<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/f${i}.ts\n</parameter>\n</function>\n</tool_call>`,
    ),
  "every format's sample, in turn": (n) => fill(`${FORMATS.map((f) => f.sample).join("\n")}\n`, n),
  "<tool_calls> left open": (n) => fill("<tool_calls>\n", n),
  "<function= on one line, never closed": (n) => fill("<function=", n),
  "Gemma calls cut short": (n) => fill(`${sample("gemma4").slice(0, 40)}\n`, n),
  "Python lists cut short": (n) => fill(`${sample("pythonic").slice(0, 36)}\n`, n),
  "JSON call objects never closed": (n) => fill('{"name": "read_file", "arguments": {', n),
  "brackets nested deep": (n) =>
    `<tool_call>{"name": "f", "arguments": {"a": ${"[".repeat(n / 2)}${"]".repeat(n / 2)}}}</tool_call>`,
};

/** CPU milliseconds to parse `text`: the best of three. */
function cpuMs(text: string): number {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const before = process.cpuUsage();
    parseToolCalls(text);
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return Math.round(best * 10) / 10;
}

export type ScaleRow = Record<string, string | number>;

/** One row per reply shape: ms at each size, and how much dearer 1 MB is than 100 KB. */
export function benchParserScale(): ScaleRow[] {
  // every reader compiled and optimised before any is timed
  for (const make of Object.values(SHAPES)) parseToolCalls(make(10_000));
  return Object.entries(SHAPES).map(([shape, make]) => {
    const row: ScaleRow = { shape };
    const ms: number[] = [];
    for (const size of SIZES) {
      const text = make(size);
      ms.push(cpuMs(text));
      row[`${size / 1000} KB ms`] = ms.at(-1)!;
    }
    const calls = (make(1_000_000).match(/<tool_call>/g) ?? []).length;
    if (calls) row["calls in 1 MB"] = calls;
    row["1 MB / 100 KB"] = Math.round((ms[2]! / Math.max(ms[1]!, 0.1)) * 10) / 10;
    row["MB/s at 1 MB"] = Math.round((1000 / Math.max(ms[2]!, 0.1)) * 10) / 10;
    return row;
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(
    "Text tool-call parsing by reply size (CPU ms, best of three; 1 MB / 100 KB near 10 is linear)",
  );
  console.table(benchParserScale());
}
