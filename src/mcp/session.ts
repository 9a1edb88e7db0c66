/**
 * MCP servers at work: connected with the MCP SDK's client (stdio — in the OS sandbox unless trusted
 * — or streamable HTTP), their tools turned into keel tools that go through the same guards as
 * keel's own (schema validation with per-field feedback and safe repairs, unknown names, loops, the
 * ladder), and every failure — an `isError` result, a thrown error, a timeout, a dead server —
 * answered as a tool error the model sees. One session per server set and owner: a run
 * (`withMcpScope`: `runAgent`, `runSession`) closes its servers when it ends; outside one (Studio,
 * the LangGraph server) the process keeps them until `closeMcp`. A server that cannot start is
 * named with its command and stderr tail, and the run goes on with the other tools.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { existsSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { quote } from "shell-quote";
import { z } from "zod";
import { readEnv } from "../env.js";
import { estimateTokens } from "../guard/context-budget.js";
import { NO_GRANTS } from "../sandbox/policy.js";
import { prepareCommand, probeSandbox, type PreparedCommand } from "../sandbox/runtime.js";
import { defineTool, fail, ok, type KeelTool } from "../tools/types.js";
import {
  McpConfigError,
  schemaForModel,
  toolNameFor,
  toolWanted,
  type McpServerConfig,
} from "./config.js";

/** A server that could not start or list its tools. */
export interface McpFailure {
  server: string;
  /** The command (stdio) or URL (HTTP). */
  target: string;
  detail: string;
}

export interface McpSession {
  tools: KeelTool[];
  failures: McpFailure[];
  /** Each server's tools as the model sees them (for `keel mcp` and the token budget). */
  servers: Array<{
    name: string;
    target: string;
    sandboxed: boolean;
    tools: string[];
    /** What its tools' schemas cost in tokens of the window (keel's estimate). */
    tokens: number;
  }>;
}

interface Connected {
  client: Client;
  prepared?: PreparedCommand;
}

/**
 * Who owns a set of connected servers: a run (`withMcpScope`, which closes them when the run ends,
 * also on error and abort), else the process (Studio, the LangGraph server; `closeMcp` at exit).
 */
interface McpScope {
  sessions: Map<string, Promise<McpSession>>;
  open: Connected[];
}
const processScope: McpScope = { sessions: new Map(), open: [] };
const runScope = new AsyncLocalStorage<McpScope>();
const currentScope = () => runScope.getStore() ?? processScope;

/**
 * Runs `fn` as one run that owns the MCP servers it starts: every server connected while it runs
 * (in its async context: the graph's nodes) is closed when it settles, whatever the outcome. A
 * resumed run starts them again.
 */
export async function withMcpScope<T>(fn: () => Promise<T>): Promise<T> {
  const scope: McpScope = { sessions: new Map(), open: [] };
  try {
    return await runScope.run(scope, fn);
  } finally {
    await closeScope(scope);
  }
}

/** The session for a set of servers (connected on first use, then shared). */
export function mcpSession(
  servers: Record<string, McpServerConfig>,
  workspace: string,
  reserved: ReadonlySet<string>,
): Promise<McpSession> {
  if (Object.keys(servers).length === 0)
    return Promise.resolve({ tools: [], failures: [], servers: [] });
  const scope = currentScope();
  const key = JSON.stringify({ servers, workspace });
  let hit = scope.sessions.get(key);
  if (!hit) {
    hit = connectAll(servers, workspace, reserved, scope.open);
    scope.sessions.set(key, hit);
  }
  return hit;
}

/** Closes the servers the process owns (the CLI calls it before exiting). */
export async function closeMcp(): Promise<void> {
  await closeScope(processScope);
}

async function closeScope(scope: McpScope): Promise<void> {
  // Connections still being made finish first, so none is left open behind the close.
  await Promise.allSettled(scope.sessions.values());
  scope.sessions.clear();
  const all = scope.open.splice(0);
  await Promise.all(
    all.map(async (c) => {
      await c.client.close().catch(() => undefined);
      c.prepared?.finish("");
    }),
  );
}

async function connectAll(
  servers: Record<string, McpServerConfig>,
  workspace: string,
  reserved: ReadonlySet<string>,
  open: Connected[],
): Promise<McpSession> {
  const session: McpSession = { tools: [], failures: [], servers: [] };
  const taken = new Set(reserved);
  for (const [name, config] of Object.entries(servers)) {
    const target = config.url ?? quote([config.command!, ...config.args]);
    let connected: Connected & { sandboxed: boolean; stderr: () => string };
    try {
      connected = await connect(name, config, workspace);
    } catch (e) {
      session.failures.push({ server: name, target, detail: (e as Error).message });
      continue;
    }
    try {
      const listed = await connected.client.listTools(undefined, { timeout: startupMs(config) });
      const names: string[] = [];
      let tokens = 0;
      for (const t of listed.tools) {
        if (!toolWanted(config, t.name)) continue;
        const toolName = toolNameFor(name, t.name, taken);
        taken.add(toolName);
        const tool = mcpTool(name, config, connected.client, t, toolName);
        session.tools.push(tool);
        names.push(toolName);
        tokens += estimateTokens(JSON.stringify(tool.parameters) + tool.description);
      }
      open.push(connected);
      session.servers.push({
        name,
        target,
        sandboxed: connected.sandboxed,
        tools: names,
        tokens,
      });
    } catch (e) {
      session.failures.push({
        server: name,
        target,
        detail: `${(e as Error).message}${tail(connected.stderr())}`,
      });
      await connected.client.close().catch(() => undefined);
    }
  }
  return session;
}

/** How long a server may take to start and list its tools (`timeout` is for tool calls). */
const startupMs = (s: McpServerConfig) => Math.max(s.timeout, 30_000);

const tail = (stderr: string) =>
  stderr.trim() ? `; its stderr: ${stderr.trim().slice(-400)}` : "";

/** Starts (stdio) or reaches (HTTP) one server. A stdio server runs in the sandbox unless trusted. */
async function connect(name: string, s: McpServerConfig, workspace: string) {
  const client = new Client({ name: "keel", version: "0.1.0" });
  if (s.url) {
    const transport = new StreamableHTTPClientTransport(new URL(s.url), {
      requestInit: { headers: s.headers },
    });
    await client.connect(transport, { timeout: startupMs(s) });
    return { client, sandboxed: false, stderr: () => "" };
  }
  const status = s.trust ? undefined : await probeSandbox();
  const sandboxed = status?.ok === true;
  if (status && !status.ok)
    throw new McpConfigError(
      `MCP server "${name}" not started: keel cannot sandbox it here (${status.reason}), and only a server the user's settings mark "trust": true runs outside the sandbox`,
    );
  let command = s.command!;
  let args = s.args;
  let env: Record<string, string> = { ...readEnv().commandEnv, ...s.env };
  let prepared: PreparedCommand | undefined;
  if (sandboxed) {
    // The entry's env is set INSIDE the sandbox (by `env` there): the shell that starts bubblewrap
    // runs with keel's own fixed environment, so BASH_ENV, PATH or LD_PRELOAD from a server's entry
    // never reach a program outside the sandbox.
    const inside = Object.entries(s.env).map(([k, v]) => `${k}=${v}`);
    const argv = inside.length
      ? ["env", ...inside, s.command!, ...s.args]
      : [s.command!, ...s.args];
    prepared = await prepareCommand(quote(argv), {
      workspace,
      grants: { ...NO_GRANTS, allowRead: serverReads(s, workspace), allowHosts: s.allowHosts },
      approved: false,
      sandboxed: true,
    });
    [command, ...args] = prepared.argv;
    env = prepared.env;
  }
  const transport = new StdioClientTransport({
    command,
    args,
    env,
    cwd: workspace,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  try {
    await client.connect(transport, { timeout: startupMs(s) });
  } catch (e) {
    prepared?.finish("");
    throw new McpConfigError(
      `MCP server "${name}" did not start (${(e as Error).message})${tail(stderr)}`,
    );
  }
  return { client, prepared, sandboxed, stderr: () => stderr };
}

/**
 * What a sandboxed stdio server may read besides the system's folders and the workspace: its own
 * program — the files its command and arguments name, each with the package it belongs to (the
 * nearest folder with a package.json or pyproject.toml: its dependencies) — and the package caches
 * `npx` and `uvx` run from.
 */
function serverReads(s: McpServerConfig, workspace: string): string[] {
  const named = [s.command!, ...s.args]
    .filter((a) => a.includes("/") && !a.startsWith("-"))
    .map((a) => path.resolve(workspace, a))
    .filter((p) => existsSync(p));
  return [...new Set([...named, ...named.map(packageRoot)])].concat([
    "~/.npm",
    "~/.cache/uv",
    "~/.local/share/uv",
  ]);
}

/** The nearest folder above a file that holds a package manifest (else the file's folder). */
function packageRoot(file: string): string {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if (["package.json", "pyproject.toml"].some((m) => existsSync(path.join(dir, m)))) return dir;
    if (path.dirname(dir) === dir) return path.dirname(file);
  }
}

/** Text of an MCP tool result (text parts; other kinds named). */
function resultText(content: unknown): string {
  if (!Array.isArray(content)) return JSON.stringify(content);
  return content
    .map((c: { type?: string; text?: string }) =>
      c.type === "text" ? (c.text ?? "") : `[${c.type ?? "content"} not shown]`,
    )
    .join("\n");
}

/** One MCP tool as a keel tool: validated by its own schema, answered with errors as results. */
function mcpTool(
  server: string,
  config: McpServerConfig,
  client: Client,
  t: {
    name: string;
    description?: string;
    inputSchema: unknown;
    annotations?: { readOnlyHint?: boolean };
  },
  name: string,
): KeelTool {
  let schema: z.ZodType;
  try {
    schema = z.fromJSONSchema(t.inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    schema = z.record(z.string(), z.unknown());
  }
  const readOnly = t.annotations?.readOnlyHint === true;
  return {
    ...defineTool({
      name,
      description: `${t.description ?? t.name} (MCP server "${server}")`,
      toolClass: readOnly ? "explore" : "command",
      schema,
      ownLimitMs: () => config.timeout,
      async run(args, ctx) {
        if (!config.trust && !ctx.approved) {
          const approved =
            ctx.approve?.({
              tool: name,
              command: `${server}.${t.name} ${JSON.stringify(args)}`,
              reason: `an MCP tool acts outside keel's file tools (server "${server}")`,
            }) ?? false;
          if (!approved)
            return fail(
              "needs_approval",
              `${name} refused: MCP tools act outside keel's file tools and no one approved this call. (The user can allow them with --yes, or mark the server "trust": true in the user settings.) Do the task without it, or finish and say what is needed.`,
            );
        }
        try {
          const result = await client.callTool(
            { name: t.name, arguments: args as Record<string, unknown> },
            undefined,
            {
              timeout: config.timeout,
              ...(ctx.signal ? { signal: ctx.signal } : {}),
            },
          );
          const text = resultText(result.content) || "(no output)";
          return result.isError ? fail("failed", `${name} (MCP) failed: ${text}`) : ok(text);
        } catch (e) {
          const message = (e as Error).message;
          return /timed out|timeout/i.test(message)
            ? fail("timeout", `${name} (MCP) did not answer within ${config.timeout} ms.`)
            : fail("failed", `${name} (MCP) failed: ${message}. The server may have stopped.`);
        }
      },
    }),
    parameters: schemaForModel(t.inputSchema),
  };
}
