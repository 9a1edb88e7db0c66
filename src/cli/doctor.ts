/**
 * `keel doctor`: whether this machine can run keel safely — the OS sandbox for commands (probed with
 * a real sandboxed command), what commands may see, and whether the model server answers: which
 * server it is (the discovery `keel models` uses), and what keel remembers of it.
 */
import pc from "picocolors";
import { readableRoots } from "../sandbox/policy.js";
import type { Provider } from "../models/provider.js";
import { machine, probeSandbox, type SandboxStatus } from "../sandbox/runtime.js";
import { ServerHttpError } from "../models/capabilities.js";
import { describeOllamaModel } from "../models/ollama/probe.js";
import { describeOpenAIModel, discoverServer } from "../models/openai/probe.js";
import { QUIRKS, type ServerKind } from "../models/openai/quirks.js";
import { storeExists } from "../persistence/checkpointer.js";
import { openPersistence } from "../persistence/open.js";
import { readServer } from "../run/server-memory.js";
import { checkPath, type Finding } from "../models/path-check.js";
import { describeProfileUse, profileOf, type ProfileUse } from "../run/profile-use.js";
import { ContextSchema } from "../coder/context.js";

export interface DoctorReport {
  node: string;
  sandbox: SandboxStatus;
  /** Folders every sandboxed command may read, besides the workspace. */
  readable: string[];
  server: {
    url: string;
    reachable: boolean;
    detail: string;
    /** Which server it is: Ollama, or an OpenAI-compatible one as discovery names it. */
    kind?: "ollama" | ServerKind;
    /** What keel remembers of it (the store of the workspace): request arguments it rejected. */
    dropped?: string[];
  };
  /** Whether the server has the model a run would ask for (checked when the server answers). */
  model?: { name: string; available: boolean; detail: string };
  /** The path to the model, checked with the canary (models/path-check.ts), when it is there. */
  path?: Finding[];
  /** The model's calibration profile: whether a run would use it, and why. */
  profile?: ProfileUse;
}

/** The server to check, and the store where keel remembers servers (if there is one). */
export interface DoctorTarget {
  provider: Provider;
  url: string;
  /** The model a run would ask for (settings, --model, or the default). */
  model: string;
  apiKey?: string;
  /** `--checkpoints` URL of the store to read (default: the workspace's). */
  checkpoints?: string;
  /** The window a run asks for (settings `contextWindow`): the canary's size. */
  window: number;
  /** Check the path with the canary (default true). */
  canary?: boolean;
  /** The run settings given (for the calibration profile a run would use). */
  settings?: Record<string, unknown>;
}

/** Checks the sandbox and the model server; never throws. */
export async function runDoctor(server: DoctorTarget): Promise<DoctorReport> {
  const [sandbox, reached, dropped] = await Promise.all([
    probeSandbox(),
    pingServer(server),
    remembered(server),
  ]);
  const model = reached.reachable ? await modelThere(server) : undefined;
  const path =
    model?.available && server.canary !== false
      ? await checkPath({
          provider: server.provider,
          url: server.url,
          model: server.model,
          ...(server.apiKey ? { apiKey: server.apiKey } : {}),
          window: server.window,
        })
      : undefined;
  const profile = model?.available
    ? (await profileOf(ContextSchema, { ...server.settings })).use
    : undefined;
  return {
    node: process.version,
    sandbox,
    readable: readableRoots(machine()),
    server: { ...reached, ...(dropped?.length ? { dropped } : {}) },
    ...(model ? { model } : {}),
    ...(path ? { path } : {}),
    ...(profile ? { profile } : {}),
  };
}

/**
 * Whether the server has the model, asked as a run asks (the provider's description of it: a
 * llama-server with one model answers under any name); a run would end with exit 3 without it.
 */
async function modelThere(s: DoctorTarget): Promise<DoctorReport["model"]> {
  const describe = s.provider === "openai" ? describeOpenAIModel : describeOllamaModel;
  const timed: typeof fetch = (input, init) =>
    fetch(input, { ...init, signal: AbortSignal.timeout(3000) });
  try {
    const profile = await describe(timed, s.url, s.model, s.apiKey);
    const served = profile.server === "llama.cpp" ? profile.model : undefined;
    return {
      name: s.model,
      available: true,
      // a llama-server with one model answers under any name: say which model that is
      detail:
        served && served !== s.model
          ? `the server answers to any name with the one model it serves, ${served}`
          : "the server has it",
    };
  } catch (e) {
    const missing = e instanceof ServerHttpError && e.status_code === 404;
    return {
      name: s.model,
      available: false,
      detail: missing
        ? `the server has no model "${s.model}": ${s.provider === "ollama" ? `ollama pull ${s.model}, or ` : ""}choose another with --model (keel models lists them)`
        : `could not ask about it (${(e as Error).message})`,
    };
  }
}

/** The arguments the store remembers the server rejecting; nothing when there is no store. */
async function remembered(s: DoctorTarget): Promise<string[] | undefined> {
  if (!s.checkpoints || !storeExists(s.checkpoints)) return undefined;
  try {
    const persistence = await openPersistence(s.checkpoints);
    try {
      return (await readServer(persistence.store, s.url))?.dropped;
    } finally {
      await persistence.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * Ollama's `/api/version`, or an OpenAI-compatible server named by the discovery `keel models` uses
 * (llama.cpp, LM Studio, vLLM, MLX, or a generic one), with its models and slots.
 */
async function pingServer(s: DoctorTarget): Promise<DoctorReport["server"]> {
  const { url } = s;
  const timed: typeof fetch = (input, init) =>
    fetch(input, { ...init, signal: AbortSignal.timeout(3000) });
  try {
    if (s.provider === "openai") {
      const found = await discoverServer(timed, url, s.apiKey);
      const slots =
        found.slots && found.slots.total > 1
          ? `, ${found.slots.total} slots${found.slots.window ? ` of ${found.slots.window} tokens` : ""}`
          : found.slots?.window
            ? `, context ${found.slots.window} tokens`
            : "";
      return {
        url,
        reachable: true,
        kind: found.kind,
        detail: `${QUIRKS[found.kind].label}, ${found.models.length} models${slots}`,
      };
    }
    const res = await timed(`${url.replace(/\/$/, "")}/api/version`);
    if (!res.ok) return { url, reachable: false, detail: `answered ${res.status}` };
    const body = (await res.json()) as { version?: string };
    return { url, reachable: true, kind: "ollama", detail: `Ollama ${body.version ?? "?"}` };
  } catch (e) {
    const status = e instanceof ServerHttpError ? e.status_code : undefined;
    return {
      url,
      reachable: false,
      detail:
        status === 401 || status === 403
          ? `answered ${status}: give its API key with --api-key or OPENAI_API_KEY`
          : status
            ? `answered ${status}`
            : `not reachable (${(e as Error).message})`,
    };
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
  if (r.model)
    lines.push(`model     ${mark(r.model.available)}  ${r.model.name}: ${r.model.detail}`);
  if (r.server.dropped?.length)
    lines.push(
      `          remembered: the server rejects ${r.server.dropped.join(", ")}; keel leaves ${r.server.dropped.length > 1 ? "them" : "it"} out of its requests`,
    );
  if (r.profile)
    lines.push(`profile   ${describeProfileUse(r.profile).replace(/^calibration: /, "")}`);
  for (const f of r.path ?? []) {
    lines.push(`${f.check.padEnd(9)} ${mark(f.ok)}  ${f.detail}`);
    if (f.fix) lines.push(`          to fix: ${f.fix}`);
  }
  if (r.path?.length)
    lines.push(
      pc.dim(
        "          (each check reads the server's own counts and errors; --json says what each proves)",
      ),
    );
  return lines.join("\n");
}
