/**
 * Which MCP servers a run gets: the user settings' own, and the workspace's `.mcp.json` servers a
 * person approved (`keel mcp approve`); a project server nobody approved is left out and named.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { readEnv } from "../env.js";
import { approvalsFile, isApproved } from "./approval.js";
import { parseMcpJson, type McpServerConfig } from "./config.js";

/** The servers a workspace's `.mcp.json` names (never trusted); none when it has no such file. */
export function projectMcpServers(workspace: string): Record<string, McpServerConfig> {
  const file = path.join(workspace, ".mcp.json");
  let text: string | undefined;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    text = undefined;
  }
  return text ? parseMcpJson(file, text) : {};
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
