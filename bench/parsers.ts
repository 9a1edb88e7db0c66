/** Text tool-call parsing throughput per format. */
import { performance } from "node:perf_hooks";
import { parseToolCalls } from "../src/models/tool-calls/index.js";
import type { FormatName } from "../src/models/tool-calls/types.js";

const SAMPLES: Partial<Record<FormatName, string>> = {
  hermes: `I'll read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>`,
  "llama3-json": `<|python_tag|>{"name": "read_file", "parameters": {"path": "README.md"}}`,
  mistral: `[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "README.md"}}]`,
  pythonic: `[read_file(path="README.md"), list_dir(path="src")]`,
  granite: `<|tool_call|>[{"name": "read_file", "arguments": {"path": "README.md"}}]`,
  lfm2: `<|tool_call_start|>[read_file(path="README.md")]<|tool_call_end|>`,
  "glm-4.5": `<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>README.md</arg_value>\n</tool_call>`,
  gemma: `call:read_file{path:<escape>README.md<escape>}`,
  "qwen3-coder": `<tool_call>\n<function=read_file>\n<parameter=path>\nREADME.md\n</parameter>\n</function>\n</tool_call>`,
  deepseek: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{"path": "README.md"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
  "phi4-mini": `functools[{"name": "read_file", "arguments": {"path": "README.md"}}]`,
  functionary: `<function=read_file>{"path": "README.md"}</function>`,
  "command-r": `<|START_ACTION|>[{"tool_name": "read_file", "parameters": {"path": "README.md"}}]<|END_ACTION|>`,
  "kimi-k2": `<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{"path": "README.md"}<|tool_call_end|><|tool_calls_section_end|>`,
  harmony: `<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"path":"README.md"}<|call|>`,
};

export function benchParsers(): Record<string, { callsPerSecond: number }> {
  const out: Record<string, { callsPerSecond: number }> = {};
  for (const [format, text] of Object.entries(SAMPLES)) {
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
