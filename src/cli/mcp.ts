/**
 * `keel mcp`: the MCP servers a run in this workspace would use (`.mcp.json` and the settings'
 * `mcpServers`), each started as a run starts it, with its tools and what their schemas cost in
 * tokens of the window — small models degrade with many tools.
 */
import pc from "picocolors";
import { settingsFrom } from "../agent/context.js";
import { mcpServersOf, mcpSession, type McpSession } from "../mcp/session.js";
import { ALL_TOOLS } from "../tools/registry.js";
import { MCP_WARN_SHARE } from "./timeline.js";

export interface McpReport extends McpSession {
  window: number;
}

/** Connects the workspace's servers and reports them. */
export async function listMcp(workspace: string): Promise<McpReport> {
  const settings = settingsFrom({ context: { workspace } });
  const session = await mcpSession(
    mcpServersOf(workspace, settings.mcpServers),
    workspace,
    new Set(ALL_TOOLS.map((t) => t.name)),
  );
  return { ...session, window: settings.contextWindow };
}

/** The report people read. */
export function formatMcp(r: McpReport): string {
  if (r.servers.length === 0 && r.failures.length === 0)
    return 'No MCP servers: add them to .mcp.json ({"mcpServers": {"name": {"command": …}}}) or to mcpServers in your settings.';
  const lines: string[] = [];
  let total = 0;
  for (const s of r.servers) {
    total += s.tokens;
    lines.push(
      `${pc.bold(s.name)}  ${pc.dim(s.target)}  ${s.sandboxed ? "sandboxed" : "not sandboxed"} · ${s.tools.length} tools · ~${s.tokens} tokens`,
      `  ${s.tools.join(", ") || "(no tools)"}`,
    );
  }
  for (const f of r.failures)
    lines.push(`${pc.red(f.server)}  ${pc.dim(f.target)}  not available: ${f.detail}`);
  const share = total / r.window;
  lines.push(
    "",
    `MCP tools take ~${total} tokens of the ${r.window}-token window (${Math.round(share * 100)}%)` +
      (share > MCP_WARN_SHARE
        ? pc.yellow(
            ` — more than ${MCP_WARN_SHARE * 100}%: small models pick tools worse with many; narrow them with includeTools`,
          )
        : ""),
  );
  return lines.join("\n");
}
