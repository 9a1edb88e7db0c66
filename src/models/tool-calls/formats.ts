/**
 * One record per tool-call format: how `auto` recognises it, its reader, how a chat template or an
 * Ollama family points at it, where its markup opens (for the stream filter), how prompt mode asks
 * for it, and a sample (for tests and the bench). Adding a family touches this file only (and its
 * reader). The order is the order `auto` tries them: most specific first.
 */
import { functionaryFormat, hermesFormat } from "./hermes-formats.js";
import {
  commandRFormat,
  graniteFormat,
  llamaJsonFormat,
  mistralFormat,
  phiFormat,
} from "./json-formats.js";
import { deepseekFormat, harmonyFormat, kimiFormat } from "./token-formats.js";
import {
  apertusFormat,
  granite20bFormat,
  internlmFormat,
  minimaxM2Format,
  nemotronFormat,
  olmo3Format,
  toolCallsBlockFormat,
} from "./tag-formats.js";
import { qwen3CoderFormat } from "./qwen-formats.js";
import { gemmaFormat, glmFormat, lfm2Format, pythonicFormat } from "./text-formats.js";
import type { Extractor, FormatName } from "./types.js";
import { REASONING_MARKERS } from "./reasoning.js";

export interface FormatRecord {
  name: FormatName;
  /** `auto` tries the reader when this matches the text. */
  marker: RegExp;
  extract: Extractor;
  /** Literal text that opens this format's markup: a streamed reply is held back from there. */
  opens: string[];
  /** A chat template containing this writes the format (`/api/show`'s template, llama.cpp's `/props`). */
  template?: RegExp;
  /** Ollama model families (`details.family`) that write it when the template says nothing. */
  family?: RegExp;
  /** One call to read_file as prompt mode asks for it; formats without one are asked in Hermes tags. */
  example?: string;
  /** A reply in this format calling read_file on README.md. */
  sample: string;
}

const R = '{"path": "README.md"}';

export const FORMATS: readonly FormatRecord[] = [
  {
    name: "deepseek",
    marker: /<[｜|]tool(▁|_| |\\_)calls?((▁|_| |\\_)begin)?[｜|]>|<[｜|]DSML[｜|]/,
    extract: deepseekFormat,
    opens: ["<｜"],
    template: /<｜tool▁calls▁begin｜>/,
    family: /^deepseek/,
    sample: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>${R}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
  },
  {
    name: "kimi-k2",
    marker: /<\|tool_calls?_section_begin\|>|<\|tool_call_begin\|>|<\|tool_call_argument_begin\|>/,
    extract: kimiFormat,
    opens: ["<|"],
    template: /<\|tool_calls_section_begin\|>/,
    sample: `<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>${R}<|tool_call_end|><|tool_calls_section_end|>`,
  },
  {
    name: "harmony",
    marker: /to=functions\.|<\|channel\|>\w+\s+to=|to=[^\s<=]+\s*<\|channel\|>/,
    extract: harmonyFormat,
    opens: ["<|"],
    template: /<\|channel\|>|to=functions\./,
    family: /^gptoss|^gpt-oss/,
    sample: `<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>${R}<|call|>`,
  },
  {
    name: "minimax-m2",
    marker:
      /<minimax:tool_call>|<(\w+:|[｜|]DSML[｜|])?invoke\s+name\s*=|<function\s+name\s*=[^<>]*>\s*<(param\s|\/function>)/,
    extract: minimaxM2Format,
    opens: ["<minimax:tool_call>", "<invoke ", "<｜DSML｜", "<function name="],
    template: /<minimax:tool_call>/,
    family: /^minimax/,
    example: `<minimax:tool_call>\n<invoke name="read_file">\n<parameter name="path">README.md</parameter>\n</invoke>\n</minimax:tool_call>`,
    sample: `<minimax:tool_call>\n<invoke name="read_file">\n<parameter name="path">README.md</parameter>\n</invoke>\n</minimax:tool_call>`,
  },
  {
    name: "internlm2",
    marker: /<\|action_start\|>\s*<\|plugin\|>/,
    extract: internlmFormat,
    opens: ["<|"],
    template: /<\|plugin\|>/,
    family: /^internlm/,
    sample: `<|action_start|><|plugin|>\n{"name": "read_file", "parameters": ${R}}<|action_end|>`,
  },
  {
    name: "apertus",
    marker: /<\|tools_prefix\|>/,
    extract: apertusFormat,
    opens: ["<|"],
    template: /<\|tools_prefix\|>/,
    family: /^apertus/,
    sample: `<|tools_prefix|>[{"read_file": ${R}}]<|tools_suffix|>`,
  },
  {
    name: "lfm2",
    marker: /<\|tool_call_start\|>/,
    extract: lfm2Format,
    opens: ["<|"],
    template: /<\|tool_call_start\|>/,
    family: /^lfm2/,
    example: `<|tool_call_start|>[read_file(path="README.md")]<|tool_call_end|>`,
    sample: `<|tool_call_start|>[read_file(path="README.md")]<|tool_call_end|>`,
  },
  {
    name: "granite",
    marker: /<\|tool_call\|>/,
    extract: graniteFormat,
    opens: ["<|"],
    template: /<\|tool_call\|>/,
    family: /^granite/,
    example: `<|tool_call|>[{"name": "read_file", "arguments": ${R}}]`,
    sample: `<|tool_call|>[{"name": "read_file", "arguments": ${R}}]`,
  },
  {
    name: "mistral",
    marker: /\[TOOL_CALLS\]|\[ARGS\]/,
    extract: mistralFormat,
    opens: ["[TOOL_CALLS]", "[ARGS]"],
    template: /\[TOOL_CALLS\]/,
    family: /^mistral|^mistral3|^devstral/,
    example: `[TOOL_CALLS][{"name": "read_file", "arguments": ${R}}]`,
    sample: `[TOOL_CALLS][{"name": "read_file", "arguments": ${R}}]`,
  },
  {
    name: "phi4-mini",
    marker: /functools\s*\[/,
    extract: phiFormat,
    opens: ["functools["],
    template: /functools/,
    family: /^phi3$/,
    example: `functools[{"name": "read_file", "arguments": ${R}}]`,
    sample: `functools[{"name": "read_file", "arguments": ${R}}]`,
  },
  {
    name: "command-r",
    marker: /<\|START_ACTION\|>|Action:\s*(```|[[{])/,
    extract: commandRFormat,
    opens: ["<|", "Action: ```"],
    template: /<\|START_ACTION\|>/,
    family: /^command-r|^cohere/,
    example: `<|START_ACTION|>[{"tool_name": "read_file", "parameters": ${R}}]<|END_ACTION|>`,
    sample: `<|START_ACTION|>[{"tool_name": "read_file", "parameters": ${R}}]<|END_ACTION|>`,
  },
  {
    name: "nemotron",
    marker: /<TOOLCALL>/i,
    extract: nemotronFormat,
    opens: ["<TOOLCALL>", "<toolcall>"],
    template: /<TOOLCALL>/,
    family: /^nemotron/,
    example: `<TOOLCALL>[{"name": "read_file", "arguments": ${R}}]</TOOLCALL>`,
    sample: `<TOOLCALL>[{"name": "read_file", "arguments": ${R}}]</TOOLCALL>`,
  },
  {
    name: "minimax-m1",
    marker: /<tool_calls>/,
    extract: toolCallsBlockFormat,
    opens: ["<tool_calls>"],
    template: /<tool_calls>/,
    sample: `<tool_calls>\n{"name": "read_file", "arguments": ${R}}\n</tool_calls>`,
  },
  {
    name: "hunyuan",
    marker: /<tool_calls>/,
    extract: toolCallsBlockFormat,
    opens: ["<tool_calls>"],
    family: /^hunyuan/,
    sample: `<tool_calls>[{"name": "read_file", "arguments": ${R}}]</tool_calls>`,
  },
  {
    name: "jamba",
    marker: /<tool_calls>/,
    extract: toolCallsBlockFormat,
    opens: ["<tool_calls>"],
    family: /^jamba/,
    sample: `<tool_calls>[{"name": "read_file", "arguments": ${R}}]</tool_calls>`,
  },
  {
    name: "olmo3",
    marker: /<function_calls>/,
    extract: olmo3Format,
    opens: ["<function_calls>"],
    template: /<function_calls>/,
    family: /^olmo/,
    example: `<function_calls>\nread_file(path="README.md")\n</function_calls>`,
    sample: `<function_calls>\nread_file(path="README.md")\n</function_calls>`,
  },
  {
    name: "granite-20b-fc",
    marker: /<function_call>/,
    extract: granite20bFormat,
    opens: ["<function_call>"],
    template: /<function_call>/,
    sample: `<function_call> {"name": "read_file", "arguments": ${R}}`,
  },
  {
    name: "qwen3-coder",
    marker: /<function=[^<>\n]+>(?!\s*\{)/,
    extract: qwen3CoderFormat,
    opens: ["<tool_call>", "<function="],
    template: /<parameter=/,
    example: `<tool_call>\n<function=read_file>\n<parameter=path>\nREADME.md\n</parameter>\n</function>\n</tool_call>`,
    sample: `<tool_call>\n<function=read_file>\n<parameter=path>\nREADME.md\n</parameter>\n</function>\n</tool_call>`,
  },
  {
    name: "functionary",
    marker:
      /<function(=[^<>\n]+|\s+name\s*=\s*"[^"<>\n]+")>\s*\{|>>>\s*[\w.-]+\s*\n|^\s*[\p{L}_][\p{L}\p{N}_.-]*\s*\n\s*\{/u,
    extract: functionaryFormat,
    opens: ["<function=", "<function name=", ">>>"],
    example: `<function=read_file>${R}</function>`,
    sample: `<function=read_file>${R}</function>`,
  },
  {
    name: "glm-4.5",
    marker: /<tool_call>\s*[^\s<{[]+\s*(<arg_key>|<\/tool_call>)|^[ \t]*[^\s<>]+\s*<arg_key>/m,
    extract: glmFormat,
    opens: ["<tool_call>", "<arg_key>"],
    template: /<arg_key>/,
    family: /^glm4moe|^glm/,
    example: `<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>README.md</arg_value>\n</tool_call>`,
    sample: `<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>README.md</arg_value>\n</tool_call>`,
  },
  {
    name: "hermes",
    marker: /<(longcat_)?tool_call>|<(tools?|response|json|xml|JSON)>\s*\{\s*"name"/,
    extract: hermesFormat,
    // (`<response>`, `<json>`, `<xml>` may wrap an answer: the call object in them is held back.)
    opens: ["<tool_call>", "<longcat_tool_call>", "<tool>", "<tools>"],
    template: /<tool_call>/,
    family: /^qwen3moe$|^qwen3$|^qwen2/,
    example: `<tool_call>\n{"name": "read_file", "arguments": ${R}}\n</tool_call>`,
    sample: `I'll read it.\n<tool_call>\n{"name": "read_file", "arguments": ${R}}\n</tool_call>`,
  },
  {
    name: "gemma4",
    marker: /<\|tool_call>/,
    extract: gemmaFormat,
    opens: ["<|tool_call>"],
    template: /<\|tool_call>/,
    family: /^gemma4/,
    example: `<|tool_call>call:read_file{path:<|"|>README.md<|"|>}<tool_call|>`,
    sample: `<|tool_call>call:read_file{path:<|"|>README.md<|"|>}<tool_call|>`,
  },
  {
    name: "gemma",
    marker: /call:[\p{L}\p{N}_.-]+\s*\{|```tool_code/u,
    extract: gemmaFormat,
    opens: ["<start_function_call>", "```tool_code"],
    template: /<start_function_call>|tool_code/,
    example: '```tool_code\nread_file(path="README.md")\n```',
    sample: `call:read_file{path:<escape>README.md<escape>}`,
  },
  {
    name: "pythonic",
    marker: /\[\s*[A-Za-z_][\w.-]*\(|<\|python_start\|>/,
    extract: pythonicFormat,
    opens: ["<|"],
    template: /<\|python_start\|>/,
    family: /^llama4/,
    example: `[read_file(path="README.md")]`,
    sample: `[read_file(path="README.md"), list_dir(path="src")]`,
  },
  {
    name: "llama3-json",
    marker:
      /\{\s*"(name|tool|tool_name|function|type|arguments|parameters|tool_calls)"\s*:|<\|python_tag\|>/,
    extract: llamaJsonFormat,
    opens: ["<|"],
    template: /<\|python_tag\|>/,
    family: /^llama/,
    example: `{"name": "read_file", "parameters": ${R}}`,
    sample: `<|python_tag|>{"name": "read_file", "parameters": ${R}}`,
  },
];

/** The record of a format. */
export const formatRecord = (name: FormatName): FormatRecord =>
  FORMATS.find((f) => f.name === name)!;

/** Where tool-call markup of any format can open, for text shown while it streams. */
export const MARKUP_OPENERS: readonly string[] = [...new Set(FORMATS.flatMap((f) => f.opens))];

/**
 * The openers that are call markup and nothing else (not `<|` or `>>>`, which special tokens and
 * reasoning markers share): a model reasons before its calls, so a reasoning marker after one of
 * them is inside a call's arguments (`maskReasoning`).
 */
export const CALL_OPENERS: readonly string[] = MARKUP_OPENERS.filter(
  (o) => o.length > 3 && !REASONING_MARKERS.some((m) => m.open.startsWith(o)),
);
