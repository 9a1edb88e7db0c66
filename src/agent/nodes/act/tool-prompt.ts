/**
 * Prompt mode (F9): for a model without the tools capability, each tool is described once in the
 * system prompt, with the call syntax of the model's own family. Nothing else describes tools.
 */
import type { FormatName } from "../../../models/tool-calls/types.js";
import type { toolDefinition } from "../../../tools/registry.js";

type ToolDef = ReturnType<typeof toolDefinition>;

/** How one call is written in each format (special-token formats fall back to Hermes tags). */
const EXAMPLE: Partial<Record<FormatName, string>> = {
  hermes: `<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>`,
  "llama3-json": `{"name": "read_file", "parameters": {"path": "README.md"}}`,
  mistral: `[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "README.md"}}]`,
  pythonic: `[read_file(path="README.md")]`,
  granite: `<|tool_call|>[{"name": "read_file", "arguments": {"path": "README.md"}}]`,
  lfm2: `<|tool_call_start|>[read_file(path="README.md")]<|tool_call_end|>`,
  "glm-4.5": `<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>README.md</arg_value>\n</tool_call>`,
  gemma: '```tool_code\nread_file(path="README.md")\n```',
  "qwen3-coder": `<tool_call>\n<function=read_file>\n<parameter=path>\nREADME.md\n</parameter>\n</function>\n</tool_call>`,
  "phi4-mini": `functools[{"name": "read_file", "arguments": {"path": "README.md"}}]`,
  functionary: `<function=read_file>{"path": "README.md"}</function>`,
  "command-r": `<|START_ACTION|>[{"tool_name": "read_file", "parameters": {"path": "README.md"}}]<|END_ACTION|>`,
};

/** The format prompt mode asks a model to write. */
export function promptFormat(format: FormatName): FormatName {
  return EXAMPLE[format] ? format : "hermes";
}

/** The call syntax for a format, as a sentence and an example. */
export function callSyntax(format: FormatName): string {
  return `To call a tool, write exactly this form (here calling read_file):\n${EXAMPLE[promptFormat(format)]}\nYou may make several calls in one message. A message that calls tools should contain nothing else.`;
}

/** The tools section of a prompt-mode system prompt: every tool once, then the call syntax. */
export const TOOLS_IN_PROMPT = (tools: ToolDef[], format: FormatName) => `<tools>
${tools
  .map(
    (t) =>
      `<tool name="${t.function.name}">\n${t.function.description}\nparameters: ${JSON.stringify(t.function.parameters)}\n</tool>`,
  )
  .join("\n")}
</tools>
<calling_tools>
${callSyntax(format)}
Each result comes back to you in a <tool_response> message.
</calling_tools>`;
