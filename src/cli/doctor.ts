/**
 * `keel doctor`: whether this machine can run keel safely — the OS sandbox for commands (probed with
 * a real sandboxed command), what commands may see, and whether the model server answers.
 */
import pc from "picocolors";
import { readableRoots } from "../sandbox/policy.js";
import { machine, probeSandbox, type SandboxStatus } from "../sandbox/runtime.js";

export interface DoctorReport {
  node: string;
  sandbox: SandboxStatus;
  /** Folders every sandboxed command may read, besides the workspace. */
  readable: string[];
  server: { url: string; reachable: boolean; detail: string };
}

/** Checks the sandbox and the model server; never throws. */
export async function runDoctor(serverUrl: string): Promise<DoctorReport> {
  const [sandbox, server] = await Promise.all([probeSandbox(), pingServer(serverUrl)]);
  return { node: process.version, sandbox, readable: readableRoots(machine()), server };
}

async function pingServer(url: string): Promise<DoctorReport["server"]> {
  try {
    const res = await fetch(`${url.replace(/\/$/, "")}/api/version`, {
      signal: AbortSignal.timeout(3000),
    });
    const body = res.ok ? ((await res.json()) as { version?: string }) : {};
    return {
      url,
      reachable: res.ok,
      detail: res.ok ? `version ${body.version ?? "?"}` : `answered ${res.status}`,
    };
  } catch (e) {
    return { url, reachable: false, detail: `not reachable (${(e as Error).message})` };
  }
}

/** The report people read. */
export function formatDoctor(r: DoctorReport): string {
  const mark = (ok: boolean) => (ok ? pc.green("ok") : pc.red("no"));
  const lines = [`node      ${r.node}`];
  if (r.sandbox.ok) {
    lines.push(
      `sandbox   ${mark(true)}  ${r.sandbox.detail} (${r.sandbox.platform})`,
      `          commands read: the workspace and ${r.readable.join(" ")}`,
      "          commands write: the workspace only · network: none (approved installs: package registries)",
      "          more with --allow-read, --allow-write, --allow-host",
    );
  } else {
    lines.push(
      `sandbox   ${mark(false)}  ${r.sandbox.reason}`,
      `          to fix: ${r.sandbox.fix}`,
      "          until then keel asks before every command (and refuses commands when nobody can answer)",
    );
  }
  lines.push(`server    ${mark(r.server.reachable)}  ${r.server.url}: ${r.server.detail}`);
  return lines.join("\n");
}
