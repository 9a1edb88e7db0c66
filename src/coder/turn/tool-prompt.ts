/**
 * Prompt mode (F9): for a model without the tools capability, each tool is described once in the
 * system prompt, with the call syntax of the model's own family. Nothing else describes tools.
 */
import { formatRecord } from "../../models/tool-calls/formats.js";
import type { FormatName } from "../../models/tool-calls/types.js";
import type { toolDefinition } from "../../tools/registry.js";

type ToolDef = ReturnType<typeof toolDefinition>;

/** The format prompt mode asks a model to write. */
export function promptFormat(format: FormatName): FormatName {
  return formatRecord(format).example ? format : "hermes";
}

/** The call syntax for a format, as a sentence and an example. */
export function callSyntax(format: FormatName): string {
  return `To call a tool, write exactly this form (here calling read_file):\n${formatRecord(promptFormat(format)).example}\nYou may make several calls in one message. A message that calls tools should contain nothing else.`;
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
