/**
 * `keel doctor`: whether this machine can run keel safely — the OS sandbox for commands (probed with
 * a real sandboxed command), what commands may see, and whether the model server answers.
 */
import pc from "picocolors";
import { readableRoots } from "../sandbox/policy.js";
import type { Provider } from "../run/settings.js";
import { machine, probeSandbox, type SandboxStatus } from "../sandbox/runtime.js";

export interface DoctorReport {
  node: string;
  sandbox: SandboxStatus;
  /** Folders every sandboxed command may read, besides the workspace. */
  readable: string[];
  server: { url: string; reachable: boolean; detail: string };
}

/** Checks the sandbox and the model server; never throws. */
export async function runDoctor(server: {
  provider: Provider;
  url: string;
  apiKey?: string;
}): Promise<DoctorReport> {
  const [sandbox, reached] = await Promise.all([probeSandbox(), pingServer(server)]);
  return { node: process.version, sandbox, readable: readableRoots(machine()), server: reached };
}

/** Ollama's `/api/version`, or an OpenAI-compatible server's `/v1/models`. */
async function pingServer(s: {
  provider: Provider;
  url: string;
  apiKey?: string;
}): Promise<DoctorReport["server"]> {
  const { url } = s;
  const openai = s.provider === "openai";
  try {
    const res = await fetch(`${url.replace(/\/$/, "")}${openai ? "/models" : "/api/version"}`, {
      signal: AbortSignal.timeout(3000),
      ...(s.apiKey ? { headers: { Authorization: `Bearer ${s.apiKey}` } } : {}),
    });
    if (!res.ok) return { url, reachable: false, detail: `answered ${res.status}` };
    const body = (await res.json()) as { version?: string; data?: unknown[] };
    return {
      url,
      reachable: true,
      detail: openai
        ? `OpenAI-compatible, ${body.data?.length ?? 0} models`
        : `Ollama ${body.version ?? "?"}`,
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
