/**
 * Repair before refusal (F6): map a foreign tool name to ours and fix arguments where the fix is
 * unambiguous — a known alias, a type the schema makes certain, a JSON string where an object is
 * expected. Never invents content. Every repair is described, so the model and the trail see it.
 */
import type { KeelTool } from "./types.js";

/** Names other agents and model trainers use for our tools. */
const NAME_ALIASES: Record<string, string> = {
  bash: "run_command",
  shell: "run_command",
  sh: "run_command",
  execution: "run_command",
  execute: "run_command",
  exec: "run_command",
  run: "run_command",
  terminal: "run_command",
  run_shell_command: "run_command",
  run_terminal_cmd: "run_command",
  execute_command: "run_command",
  command: "run_command",
  ls: "list_dir",
  list_directory: "list_dir",
  list_files: "list_dir",
  listdir: "list_dir",
  dir: "list_dir",
  list: "list_dir",
  cat: "read_file",
  read: "read_file",
  open_file: "read_file",
  view: "read_file",
  view_file: "read_file",
  readfile: "read_file",
  get_file: "read_file",
  create_file: "write_file",
  write: "write_file",
  save_file: "write_file",
  writefile: "write_file",
  createfile: "write_file",
  new_file: "write_file",
  write_to_file: "write_file",
  mkdir: "make_dir",
  create_directory: "make_dir",
  create_dir: "make_dir",
  make_directory: "make_dir",
  mkdirs: "make_dir",
  str_replace: "edit_file",
  str_replace_editor: "edit_file",
  replace: "edit_file",
  replace_in_file: "edit_file",
  apply_edit: "edit_file",
  edit: "edit_file",
  modify_file: "edit_file",
  find: "glob",
  find_files: "glob",
  search_files: "glob",
  file_search: "glob",
  search: "grep",
  rg: "grep",
  ripgrep: "grep",
  search_code: "grep",
  grep_search: "grep",
  analyze: "analyze_code",
  analyse_code: "analyze_code",
  code_analysis: "analyze_code",
  outline: "analyze_code",
};

/** `filesystem {operation: …}` style tools: the operation names the tool. */
const OPERATION_TOOLS: Record<string, string> = {
  read: "read_file",
  read_file: "read_file",
  cat: "read_file",
  view: "read_file",
  write: "write_file",
  write_file: "write_file",
  create: "write_file",
  create_file: "write_file",
  list: "list_dir",
  ls: "list_dir",
  list_dir: "list_dir",
  list_directory: "list_dir",
  mkdir: "make_dir",
  make_dir: "make_dir",
  create_directory: "make_dir",
  edit: "edit_file",
  replace: "edit_file",
  str_replace: "edit_file",
  glob: "glob",
  find: "glob",
  grep: "grep",
  search: "grep",
};
const OPERATION_HOSTS = new Set([
  "filesystem",
  "file_system",
  "fs",
  "files",
  "file",
  "file_tool",
  "str_replace_based_edit_tool",
  "text_editor",
]);
const OPERATION_KEYS = ["operation", "action", "command", "op", "mode"];

/** Field names models use for ours. */
const FIELD_ALIASES: Record<string, string[]> = {
  path: [
    "file_path",
    "filepath",
    "filename",
    "file",
    "file_name",
    "dir",
    "directory",
    "folder",
    "target",
    "target_file",
    "dir_path",
    "relative_path",
  ],
  content: ["text", "contents", "data", "body", "file_text", "code", "file_content"],
  command: ["cmd", "script", "shell_command", "commandLine", "command_line"],
  old_text: ["old_str", "old_string", "search", "find", "original", "old"],
  new_text: ["new_str", "new_string", "replacement", "replace", "new"],
  pattern: ["query", "regex", "search", "glob_pattern", "expression"],
  timeout_ms: ["timeout"],
  offset: ["start_line", "line", "from"],
  limit: ["max_lines", "lines", "count"],
};

export interface NameRepair {
  name: string;
  args: unknown;
  note?: string;
}

/** Maps a foreign tool name (and a `filesystem {operation}` call) to one of `tools`. */
export function repairToolName(
  name: string,
  args: unknown,
  tools: readonly KeelTool[],
): NameRepair | undefined {
  const have = (n: string) => tools.some((t) => t.name === n);
  const folded = tools.find((t) => t.name.toLowerCase() === name.toLowerCase());
  if (folded)
    return {
      name: folded.name,
      args,
      ...(folded.name !== name ? { note: `called ${folded.name} for ${name}` } : {}),
    };
  const key = name
    .toLowerCase()
    .replace(/[\s-]+/g, "_")
    .replace(/^(functions|tools|default_api)\./, "");
  if (OPERATION_HOSTS.has(key) && args && typeof args === "object") {
    const rec = args as Record<string, unknown>;
    const opKey = OPERATION_KEYS.find((k) => typeof rec[k] === "string");
    const target = opKey ? OPERATION_TOOLS[(rec[opKey] as string).toLowerCase()] : undefined;
    if (target && have(target)) {
      const rest = Object.fromEntries(Object.entries(rec).filter(([k]) => k !== opKey));
      return {
        name: target,
        args: rest,
        note: `called ${target} for ${name} ${opKey}=${String(rec[opKey!])}`,
      };
    }
  }
  const target = NAME_ALIASES[key] ?? NAME_ALIASES[key.replace(/_/g, "")];
  if (target && have(target)) return { name: target, args, note: `called ${target} for ${name}` };
  return undefined;
}

interface PropSchema {
  type?: string | string[];
}

/**
 * Repairs arguments against a tool's JSON schema: a JSON string for the whole object, field
 * aliases, and scalar types where the schema leaves no doubt. Returns the notes of what changed.
 */
export function repairArguments(
  args: unknown,
  schema: { properties?: Record<string, PropSchema>; required?: string[] },
): { args: unknown; notes: string[] } {
  const notes: string[] = [];
  let value = args;
  if (typeof value === "string") {
    try {
      const parsed: unknown = JSON.parse(value);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        value = parsed;
        notes.push("parsed the arguments from a JSON string");
      }
    } catch {
      return { args, notes };
    }
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return { args: value, notes };
  const props = schema.properties ?? {};
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [field, aliases] of Object.entries(FIELD_ALIASES)) {
    if (!(field in props) || field in out) continue;
    const alias = aliases.find((a) => a in out && !(a in props));
    if (alias) {
      out[field] = out[alias];
      delete out[alias];
      notes.push(`used ${alias} as ${field}`);
    }
  }
  for (const [field, prop] of Object.entries(props)) {
    if (!(field in out)) continue;
    const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== "null") : prop.type;
    const v = out[field];
    const fixed = coerceScalar(v, type);
    if (fixed !== undefined) {
      out[field] = fixed;
      notes.push(
        `${field}: ${JSON.stringify(v).slice(0, 20)} → ${JSON.stringify(fixed).slice(0, 20)}`,
      );
    }
  }
  return { args: out, notes };
}

/** The unambiguous conversions, or undefined when none applies. */
function coerceScalar(v: unknown, type: string | undefined): unknown {
  if (
    (type === "number" || type === "integer") &&
    typeof v === "string" &&
    /^\s*-?\d+(\.\d+)?\s*$/.test(v)
  ) {
    const n = Number(v);
    return type === "integer" && !Number.isInteger(n) ? undefined : n;
  }
  if (type === "string" && (typeof v === "number" || typeof v === "boolean")) return String(v);
  if (type === "boolean" && typeof v === "string" && /^(true|false)$/i.test(v.trim()))
    return v.trim().toLowerCase() === "true";
  if ((type === "object" || type === "array") && typeof v === "string") {
    try {
      const parsed: unknown = JSON.parse(v);
      if (
        type === "array"
          ? Array.isArray(parsed)
          : parsed && typeof parsed === "object" && !Array.isArray(parsed)
      )
        return parsed;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
