/**
 * Which MCP servers a run gets: the user settings' own, and the workspace's `.mcp.json` servers a
 * person approved (`keel mcp approve`); a project server nobody approved is left out and named.
 */
import path from "node:path";
import { readEnv } from "../env.js";
import { readInSync } from "../files/door.js";
import { approvalsFile, isApproved } from "./approval.js";
import { parseMcpJson, type McpServerConfig } from "./config.js";

/** The project's MCP servers file, relative to the workspace. */
export const MCP_JSON = ".mcp.json";

/**
 * The servers a workspace's `.mcp.json` names (never trusted); none when it has no such file, or
 * one keel's file door (`files/door.ts`) refuses: a link, a FIFO or a device, a file over 1 MiB.
 */
export function projectMcpServers(workspace: string): Record<string, McpServerConfig> {
  let text: string | undefined;
  try {
    text = readInSync(workspace, MCP_JSON)?.toString("utf8");
  } catch {
    text = undefined;
  }
  return text ? parseMcpJson(path.join(workspace, MCP_JSON), text) : {};
}

/** A run's servers, and the project's servers it leaves out because no person approved them. */
export interface McpServerSet {
  servers: Record<string, McpServerConfig>;
  unapproved: string[];
}

/**
 * The servers of a run: the workspace's `.mcp.json` servers a person approved (`keel mcp approve`),
 * under the user settings' own. An unapproved project server is left out and named.
 */
export function mcpServersOf(
  workspace: string,
  fromSettings: Record<string, McpServerConfig>,
  approvals: string = approvalsFile(readEnv().userSettingsFile),
): McpServerSet {
  const project = projectMcpServers(workspace);
  const servers: Record<string, McpServerConfig> = {};
  const unapproved: string[] = [];
  for (const [name, config] of Object.entries(project)) {
    if (name in fromSettings) continue;
    if (isApproved(approvals, workspace, name, config)) servers[name] = config;
    else unapproved.push(name);
  }
  return { servers: { ...servers, ...fromSettings }, unapproved };
}
