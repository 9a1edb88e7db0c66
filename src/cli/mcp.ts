/**
 * `keel mcp`: the MCP servers a run in this workspace would use (`.mcp.json` and the settings'
 * `mcpServers`), each started as a run starts it, with its tools and what their schemas cost in
 * tokens of the window — small models degrade with many tools.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import pc from "picocolors";
import { UsageError } from "../session/session.js";
import { settingsFrom } from "../coder/context.js";
import { createInterface } from "node:readline/promises";
import { question } from "./question.js";
import { readEnv } from "../env.js";
import {
  approvalsFile,
  approveHint,
  describeEntry,
  isApproved,
  recordApproval,
} from "../mcp/approval.js";
import { mcpServersOf, projectMcpServers } from "../mcp/servers.js";
import { mcpSession, type McpSession } from "../mcp/session.js";
import { ALL_TOOLS } from "../tools/registry.js";
import { MCP_WARN_SHARE } from "../session/timeline.js";
import { printable, printableName } from "../printable.js";

export interface McpReport extends McpSession {
  window: number;
  /** `.mcp.json` servers no person approved: not started. */
  unapproved: string[];
}

/** Connects the workspace's approved servers and reports them (the unapproved ones by name). */
export async function listMcp(workspace: string): Promise<McpReport> {
  const settings = settingsFrom({ context: { workspace } });
  const set = mcpServersOf(workspace, settings.mcpServers);
  const session = await mcpSession(set.servers, workspace, new Set(ALL_TOOLS.map((t) => t.name)));
  return { ...session, window: settings.contextWindow, unapproved: set.unapproved };
}

/**
 * `keel mcp approve [NAME…]`: shows each `.mcp.json` server not approved yet (all of them, or those
 * named) and asks the person whether keel may start it in this workspace; a yes is stored in the
 * user's settings folder. Returns the servers approved.
 */
export async function approveMcp(
  workspace: string,
  names: readonly string[],
  say: (line: string) => void,
): Promise<string[]> {
  const project = projectMcpServers(workspace);
  const unknown = names.filter((n) => !(n in project));
  if (unknown.length) {
    const config = path.join(workspace, ".mcp.json");
    throw new UsageError(
      existsSync(config)
        ? `${config} has no server ${unknown.join(", ")}; it names: ${Object.keys(project).join(", ") || "none"}`
        : `there is no ${config}, so no server ${unknown.join(", ")} to approve (run keel mcp approve in the workspace, or pass -w <dir>)`,
    );
  }
  const file = approvalsFile(readEnv().userSettingsFile);
  const wanted = Object.entries(project).filter(
    ([n, c]) => (names.length === 0 || names.includes(n)) && !isApproved(file, workspace, n, c),
  );
  if (wanted.length === 0) {
    say("Nothing to approve: every server asked about is approved already.");
    return [];
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const approved: string[] = [];
  try {
    for (const [name, config] of wanted) {
      say(describeEntry(name, config));
      const answer = await question(
        rl,
        `Start this server in ${workspace} (in the OS sandbox) from now on? [y/N] `,
      );
      if (/^y(es)?$/i.test(answer.trim())) {
        recordApproval(file, workspace, name, config);
        approved.push(name);
        say(`approved "${name}" (stored in ${file}; a changed entry is asked about again)`);
      } else say(`not approved: "${name}"`);
    }
  } finally {
    rl.close();
  }
  return approved;
}

/** The report people read. */
export function formatMcp(r: McpReport): string {
  const waiting = r.unapproved.length
    ? `\n${pc.yellow("not approved")}: ${printableName(r.unapproved.join(", "))} (from .mcp.json; not started). Review and approve: ${printableName(approveHint(r.unapproved))}`
    : "";
  if (r.servers.length === 0 && r.failures.length === 0)
    return waiting
      ? waiting.trim()
      : 'No MCP servers: add them to .mcp.json ({"mcpServers": {"name": {"command": …}}}) or to mcpServers in your settings.';
  const lines: string[] = [];
  let total = 0;
  for (const s of r.servers) {
    total += s.tokens;
    lines.push(
      `${pc.bold(printableName(s.name))}  ${pc.dim(printableName(s.target))}  ${s.sandboxed ? "sandboxed" : "not sandboxed"} · ${s.tools.length} tools · ~${s.tokens} tokens`,
      `  ${printableName(s.tools.join(", ")) || "(no tools)"}`,
    );
  }
  for (const f of r.failures)
    lines.push(
      `${pc.red(printableName(f.server))}  ${pc.dim(printableName(f.target))}  not available: ${printable(f.detail)}`,
    );
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
  return lines.join("\n") + waiting;
}
