/**
 * MCP servers as configured, pure: the de-facto `mcpServers` shape (`command`/`args`/`env` for stdio,
 * `url`/`headers` for streamable HTTP) with gemini-cli's `includeTools`/`excludeTools`, `timeout` and
 * `trust`, from the workspace's `.mcp.json` and keel's settings; tool names made safe for every server
 * and unique; input schemas made acceptable to local servers' grammars.
 */
import { z } from "zod";

export const McpServerSchema = z
  .object({
    command: z.string().min(1).optional().describe("stdio: the program that starts the server"),
    args: z.array(z.string()).default([]).describe("stdio: its arguments"),
    env: z.record(z.string(), z.string()).default({}).describe("stdio: extra environment"),
    url: z.string().url().optional().describe("streamable HTTP: the server's URL"),
    headers: z.record(z.string(), z.string()).default({}).describe("HTTP: request headers"),
    includeTools: z.array(z.string()).optional().describe("only these tools"),
    excludeTools: z.array(z.string()).default([]).describe("never these tools"),
    timeout: z.number().int().positive().default(60_000).describe("ms a tool call may take"),
    trust: z
      .boolean()
      .default(false)
      .describe(
        "run its tools without approval and, for stdio, outside the OS sandbox (never from .mcp.json)",
      ),
    allowHosts: z
      .array(z.string())
      .default([])
      .describe("stdio in the sandbox: hosts the server may reach"),
  })
  .strict()
  .refine((s) => Boolean(s.command) !== Boolean(s.url), {
    message: "give either command (a stdio server) or url (a streamable HTTP server)",
  });

export type McpServerConfig = z.output<typeof McpServerSchema>;
export const McpServersSchema = z.record(z.string(), McpServerSchema);

/** A `.mcp.json` that cannot be used, named with the server and field at fault. */
export class McpConfigError extends Error {
  override name = "McpConfigError";
}

/**
 * The servers of a `.mcp.json` text. A repository's file cannot trust its own servers: `trust` is
 * ignored there (set it in your user settings file's `mcpServers`).
 */
export function parseMcpJson(file: string, text: string): Record<string, McpServerConfig> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new McpConfigError(`${file}: not valid JSON: ${(e as Error).message}`);
  }
  const servers = (value as { mcpServers?: unknown } | null)?.mcpServers;
  if (servers === undefined) return {};
  const parsed = McpServersSchema.safeParse(servers);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new McpConfigError(
      `${file}: mcpServers.${issue.path.join(".")}: ${issue.message}`.replace(/\.:/, ":"),
    );
  }
  return Object.fromEntries(
    Object.entries(parsed.data).map(([name, s]) => [name, { ...s, trust: false }]),
  );
}

/** Whether a server's tool is offered, by its include/exclude lists. */
export const toolWanted = (s: McpServerConfig, tool: string): boolean =>
  (!s.includeTools || s.includeTools.includes(tool)) && !s.excludeTools.includes(tool);

/**
 * A tool's name as the model sees it: safe characters only (OpenAI-style `^[a-zA-Z0-9_-]{1,64}$`),
 * and `server__tool` when the plain name is taken (by keel or another server).
 */
export function toolNameFor(server: string, tool: string, taken: ReadonlySet<string>): string {
  const safe = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, "_");
  const plain = safe(tool).slice(0, 64);
  if (!taken.has(plain)) return plain;
  return `${safe(server)}__${safe(tool)}`.slice(0, 64);
}

/** Keywords llama.cpp's grammar conversion rejects or mishandles (docs/servers.md; kilocode PR 6755). */
const DROPPED = new Set([
  "$schema",
  "$id",
  "$comment",
  "pattern",
  "patternProperties",
  "format",
  "contentEncoding",
  "contentMediaType",
]);

/**
 * A JSON Schema local servers accept: local `$ref`s resolved (to a fixed depth), the keywords their
 * grammars reject dropped, a missing `type` filled. The original schema still validates arguments.
 */
export function schemaForModel(schema: unknown): Record<string, unknown> {
  const root = (schema && typeof schema === "object" ? schema : {}) as Record<string, unknown>;
  const defs = {
    ...((root.definitions as Record<string, unknown> | undefined) ?? {}),
    ...((root.$defs as Record<string, unknown> | undefined) ?? {}),
  };
  const walk = (node: unknown, depth: number): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, depth));
    if (!node || typeof node !== "object") return node;
    const o = node as Record<string, unknown>;
    const ref =
      typeof o.$ref === "string" ? /^#\/(?:definitions|\$defs)\/(.+)$/.exec(o.$ref) : null;
    if (ref) return depth > 8 ? { type: "object" } : walk(defs[ref[1]!] ?? {}, depth + 1);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) {
      if (DROPPED.has(k) || k === "definitions" || k === "$defs") continue;
      out[k] =
        k === "properties" && v && typeof v === "object"
          ? Object.fromEntries(Object.entries(v).map(([p, s]) => [p, walk(s, depth)]))
          : walk(v, depth);
    }
    if (out.type === undefined && !out.anyOf && !out.oneOf && !out.allOf && !out.enum)
      out.type = out.properties ? "object" : out.items ? "array" : "string";
    return out;
  };
  const top = walk(root, 0) as Record<string, unknown>;
  return { ...top, type: "object", properties: top.properties ?? {} };
}
