/** `keel models`: what each model on the Ollama server offers keel, and why it does or doesn't call tools. */
import pc from "picocolors";
import {
  chooseToolMode,
  createCapabilityProbe,
  type ModelProfile,
  type ToolMode,
} from "../models/capabilities.js";
import { ModelServerError } from "../models/errors.js";
import { withModelRetry, type RetryPolicy } from "../models/retry.js";

export interface ModelRow extends ModelProfile {
  toolMode: ToolMode;
}

/** Lists the server's models with their capabilities, tool mode and text format. */
export async function listModels(url: string, retries = 2): Promise<ModelRow[]> {
  const policy: RetryPolicy = { retries, baseMs: 300, url, model: "(listing)" };
  const tags = await withModelRetry(async () => {
    const res = await fetch(`${url.replace(/\/$/, "")}/api/tags`);
    if (!res.ok)
      throw Object.assign(new Error(`GET /api/tags answered ${res.status}`), {
        name: "ResponseError",
        status_code: res.status,
      });
    return (await res.json()) as { models?: Array<{ name: string }> };
  }, policy);
  const probe = createCapabilityProbe();
  const rows: ModelRow[] = [];
  for (const m of tags.models ?? []) {
    const profile = await probe(url, m.name, { ...policy, model: m.name });
    rows.push({ ...profile, toolMode: chooseToolMode(profile, "auto") });
  }
  return rows;
}

/** The table people read. */
export function formatModels(rows: ModelRow[], url: string): string {
  if (rows.length === 0) return `No models on ${url}. Download one with \`ollama pull qwen3:8b\`.`;
  const head = ["MODEL", "FAMILY", "CONTEXT", "CAPABILITIES", "TOOL MODE", "TEXT FORMAT"];
  const body = rows.map((r) => [
    r.model,
    r.family ?? "?",
    r.contextLength ? String(r.contextLength) : "?",
    r.capabilities.join(","),
    r.capabilities.includes("completion") ? r.toolMode : "— (cannot chat)",
    r.format,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [
    pc.bold(line(head)),
    ...body.map(line),
    "",
    pc.dim(
      "native: the model has the tools capability; keel sends tools in the request's tools field.",
    ),
    pc.dim(
      "prompt: no tools capability; keel describes each tool once in the system prompt and reads calls",
    ),
    pc.dim("        written in the TEXT FORMAT column. Force either with `keel run --tool-mode`."),
  ].join("\n");
}

export { ModelServerError };
