/**
 * A person's approval of a project's MCP servers. A `.mcp.json` travels with the repository (or is
 * written by the agent), and a server it names is a program keel would start: it starts only after
 * a person approved that exact entry for that workspace. Approvals live beside the user's settings
 * file (never in the workspace), keyed by a hash of the workspace's real path, the server's name and
 * its whole entry, so a changed entry is asked about again.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { quote } from "shell-quote";
import type { McpServerConfig } from "./config.js";
import { printableName } from "../printable.js";

/** The approvals file beside the user's settings file. */
export const approvalsFile = (userSettingsFile: string) =>
  path.join(path.dirname(userSettingsFile), "mcp-approved.json");

interface Approvals {
  approved: Record<string, { workspace: string; server: string; at: string }>;
}

/** Canonical JSON (keys sorted), so the same entry always hashes the same. */
const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : v && typeof v === "object"
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
        )
      : v;

/** The key of one server entry in one workspace. */
export function approvalKey(workspace: string, server: string, config: McpServerConfig): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical({ workspace, server, config })))
    .digest("hex");
}

function read(file: string): Approvals {
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as Partial<Approvals>;
    return { approved: value.approved ?? {} };
  } catch {
    return { approved: {} };
  }
}

/** Whether a person approved this entry for this workspace. */
export function isApproved(
  file: string,
  workspace: string,
  server: string,
  config: McpServerConfig,
): boolean {
  return approvalKey(workspace, server, config) in read(file).approved;
}

/** Records a person's approval of an entry (written whole, then renamed into place). */
export function recordApproval(
  file: string,
  workspace: string,
  server: string,
  config: McpServerConfig,
): void {
  const all = read(file);
  all.approved[approvalKey(workspace, server, config)] = {
    workspace,
    server,
    at: new Date().toISOString(),
  };
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(all, null, 2) + "\n", { mode: 0o600 });
  renameSync(tmp, file);
}

/** How a person approves the servers named (the line a run without a person prints). */
export const approveHint = (names: readonly string[]) => `keel mcp approve ${quote([...names])}`;

/** An entry as a person should see it before approving: what runs, with what. */
export function describeEntry(server: string, config: McpServerConfig): string {
  const lines = [`server "${server}":`];
  if (config.url) lines.push(`  url: ${config.url}`);
  else lines.push(`  runs: ${quote([config.command!, ...config.args])}`);
  for (const [k, v] of Object.entries(config.env)) lines.push(`  env ${k}=${v}`);
  for (const [k, v] of Object.entries(config.headers)) lines.push(`  header ${k}: ${v}`);
  if (config.allowHosts.length) lines.push(`  may reach: ${config.allowHosts.join(", ")}`);
  // what the person approves is what the file says: an escape in an argument hides nothing
  return lines.map(printableName).join("\n");
}
