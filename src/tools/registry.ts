/**
 * The tool registry: which tools exist, which an intent may use, their JSON schemas for the model,
 * and the lookup that turns a model's tool name into one of ours (or a helpful refusal).
 */
import { distance } from "fastest-levenshtein";
import { z } from "zod";
import { analyzeCodeTool } from "./analyze-code.js";
import { editFileTool } from "./edit-file.js";
import { listDirTool, makeDirTool, readFileTool, writeFileTool } from "./fs-tools.js";
import { runCommandTool } from "./run-command.js";
import { repairArguments, repairToolName } from "./repair.js";
import { globTool, grepTool } from "./search-tools.js";
import type { KeelTool } from "./types.js";

/** Every tool keel has, in the order the model sees them. */
export const ALL_TOOLS: readonly KeelTool[] = [
  readFileTool,
  writeFileTool,
  editFileTool,
  listDirTool,
  makeDirTool,
  globTool,
  grepTool,
  runCommandTool,
  analyzeCodeTool,
] as KeelTool[];

/** What a request asks for; the intent picks the toolset and the prompt. The one list of intents. */
export const INTENTS = ["build", "modify", "analyze", "run", "chat"] as const;
export type Intent = (typeof INTENTS)[number];

/** Whether a request of this intent is meant to change things (build, modify, run), not only read. */
export const changesThings = (intent: Intent) => intent !== "analyze" && intent !== "chat";

/**
 * The tools an intent may use, keel's then the run's MCP tools: analysis and chat get read-only
 * tools only (an MCP tool is read-only when its server says so: `readOnlyHint`), and so does every
 * request in plan mode (`readOnly`).
 */
export function toolsForIntent(
  intent: Intent,
  extra: readonly KeelTool[] = [],
  readOnly = false,
): KeelTool[] {
  const all = [...ALL_TOOLS, ...extra];
  return readOnly || !changesThings(intent) ? all.filter((t) => t.toolClass === "explore") : all;
}

function describeTool(tool: KeelTool) {
  const schema = tool.parameters ?? z.toJSONSchema(tool.schema, { io: "input" });
  delete schema.$schema;
  return {
    type: "function" as const,
    function: { name: tool.name, description: tool.description, parameters: schema },
  };
}

/** Definitions of keel's own tools, computed once (schema conversion is not free, and they never change). */
const DEFINITIONS = new Map(ALL_TOOLS.map((t) => [t, describeTool(t)]));

/** The OpenAI-style function definition Ollama's `tools` field takes. */
export function toolDefinition(tool: KeelTool) {
  return DEFINITIONS.get(tool) ?? describeTool(tool);
}

export type Lookup =
  | { found: true; tool: KeelTool; args: unknown; repairedFrom?: string; notes: string[] }
  | { found: false; message: string };

/**
 * Finds the tool a call means: exact name, then a repair (case, a known foreign name, a
 * `filesystem {operation}` call); otherwise an error listing the available tools and the closest.
 */
export function lookupTool(name: string, args: unknown, tools: readonly KeelTool[]): Lookup {
  const exact = tools.find((t) => t.name === name);
  if (exact) return { found: true, tool: exact, args, notes: [] };
  const repaired = repairToolName(name, args, tools);
  if (repaired) {
    const tool = tools.find((t) => t.name === repaired.name)!;
    return {
      found: true,
      tool,
      args: repaired.args,
      repairedFrom: name,
      notes: repaired.note ? [repaired.note] : [],
    };
  }
  return { found: false, message: unknownTool(name, tools) };
}

/** What the model is told of a name none of `tools` has: the tools there are, and the closest. */
export function unknownTool(name: string, tools: readonly KeelTool[]): string {
  const closest = tools
    .map((t) => ({ name: t.name, d: distance(t.name.toLowerCase(), name.toLowerCase()) }))
    .sort((a, b) => a.d - b.d)
    .slice(0, 2)
    .map((t) => t.name);
  const hidden = ALL_TOOLS.some((t) => t.name === name)
    ? ` ${name} is not available for this request (it changes files or runs commands, and this request only reads).`
    : "";
  return `unknown tool "${name}".${hidden} Available tools: ${tools.map((t) => t.name).join(", ")}. Closest: ${closest.join(", ")}.`;
}

/**
 * Validates arguments against a tool's schema, repairing what is unambiguous first (aliases,
 * "5" → 5, a JSON string for the object). On failure, names each field with the expected and
 * received type, so the model can correct the call.
 */
export function validateArgs(
  tool: KeelTool,
  args: unknown,
): { ok: true; value: unknown; notes: string[] } | { ok: false; message: string } {
  const direct = checkArgs(tool, args);
  if (direct.ok) return { ...direct, notes: [] };
  const schema = toolDefinition(tool).function.parameters as Parameters<typeof repairArguments>[1];
  const repaired = repairArguments(args ?? {}, schema);
  if (repaired.notes.length) {
    const again = tool.schema.safeParse(repaired.args);
    if (again.success) return { ok: true, value: again.data, notes: repaired.notes };
  }
  return direct;
}

/**
 * Validates arguments against a tool's schema, without repair (the one repair pass,
 * call-repair.ts, has run): the parsed value, or each field named with the expected and received
 * type, so the model can correct the call.
 */
export function checkArgs(
  tool: KeelTool,
  args: unknown,
): { ok: true; value: unknown } | { ok: false; message: string } {
  const direct = tool.schema.safeParse(args ?? {});
  if (direct.success) return { ok: true, value: direct.data };
  const problems = direct.error.issues.map((issue) => {
    const field = issue.path.join(".") || "(arguments)";
    const received = receivedType(args, issue.path);
    const expected = "expected" in issue ? String(issue.expected) : undefined;
    return expected
      ? `${field}: expected ${expected}, received ${received}`
      : `${field}: ${issue.message}`;
  });
  return {
    ok: false,
    message: `invalid arguments for ${tool.name}: ${problems.join("; ")}. Call ${tool.name} again with ${describeFields(tool)}.`,
  };
}

function receivedType(args: unknown, at: PropertyKey[]): string {
  let v: unknown = args;
  for (const k of at)
    v = v && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  if (v === undefined) return "nothing (the field is missing)";
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/** A tool's parameters in one line ("path: string, content: string"), by name; "" for a name keel does not know. */
export function fieldsOf(name: string): string {
  const tool = ALL_TOOLS.find((t) => t.name === name);
  return tool ? describeFields(tool) : "";
}

function describeFields(tool: KeelTool): string {
  const def = toolDefinition(tool).function.parameters as {
    properties?: Record<string, { type?: string }>;
    required?: string[];
  };
  const req = new Set(def.required ?? []);
  return Object.entries(def.properties ?? {})
    .map(([k, v]) => `${k}${req.has(k) ? "" : "?"}: ${v.type ?? "value"}`)
    .join(", ");
}
