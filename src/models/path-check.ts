/**
 * `keel doctor`'s checks of the whole path to the model, each read from what the server itself
 * reports (so a tiny or random model proves as much as a good one), each saying what it proves
 * and, when it finds something wrong, the flag or setting that fixes it:
 *   window  a canary prompt of the run's window, the marker at its start: the server's count of it
 *           (a silent cut counts less; a server that cannot hold it refuses it and says its size)
 *   tools   a request with a tool: refused (llama-server without --jinja), or counted no longer
 *           than the same request without it (a template that drops the tools)
 *   cache   two requests with one long prefix: what the second took from the cache, by the
 *           server's own counter (llama-server --no-cache-prompt, or cache_prompt false)
 *   unload  Ollama's /api/ps after a request: how long the model stays loaded (keep_alive)
 *   slots   llama-server's slots and the context of each
 */
import { askServer, canary, canaryPrompt, type CanaryServer } from "./canary.js";
import { discoverServer, serverRoot } from "./openai/probe.js";

export interface Finding {
  check: "window" | "tools" | "cache" | "unload" | "slots";
  /** Nothing wrong (or nothing to fix: a fact). */
  ok: boolean;
  /** What the server showed. */
  detail: string;
  /** What the check proves, and what it cannot. */
  proves: string;
  /** The flag or setting that fixes it. */
  fix?: string;
}

export interface PathTarget extends CanaryServer {
  /** The window the runs ask for (settings `contextWindow`). */
  window: number;
}

/** Shorter than this, Ollama's keep_alive unloads the model while a command or a person is awaited. */
const KEEP_ALIVE_MIN_S = 240;

const TOOL = {
  type: "function",
  function: {
    name: "read_file",
    description: "Read a file of the workspace.",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
};

/** Every check that applies to the server; never throws. */
export async function checkPath(t: PathTarget): Promise<Finding[]> {
  const ollamaRoot = t.provider === "ollama" ? t.url : await ollamaBehind(t);
  const out: Finding[] = [];
  if (t.provider === "openai") {
    const slots = await slotFacts(t);
    if (slots) out.push(slots.finding);
    out.push(await windowCheck(t, slots?.window, ollamaRoot !== undefined));
  } else out.push(await windowCheck(t, undefined, false));
  out.push(await toolsCheck(t));
  out.push(await cacheCheck(t));
  if (ollamaRoot) {
    const unload = await unloadCheck(ollamaRoot, t.model);
    if (unload) out.push(unload);
  }
  return out;
}

/** An OpenAI-compatible root that is Ollama's `/v1` (Ollama answers `/api/version` beside it). */
async function ollamaBehind(t: PathTarget): Promise<string | undefined> {
  const root = serverRoot(t.url);
  try {
    const res = await (t.fetchImpl ?? fetch)(`${root}/api/version`, {
      signal: AbortSignal.timeout(3000),
    });
    const body = (await res.json()) as { version?: unknown };
    return res.ok && typeof body.version === "string" ? root : undefined;
  } catch {
    return undefined;
  }
}

/** llama-server's slots (/props, /slots): their count and each one's context. */
async function slotFacts(
  t: PathTarget,
): Promise<{ window?: number; finding: Finding } | undefined> {
  let found;
  try {
    found = await discoverServer(t.fetchImpl ?? fetch, t.url, t.apiKey, t.model);
  } catch {
    return undefined;
  }
  if (found.kind !== "llama.cpp" || !found.slots) return undefined;
  const { total, window } = found.slots;
  const small = window !== undefined && window < t.window;
  return {
    ...(window ? { window } : {}),
    finding: {
      check: "slots",
      ok: !small,
      detail: `${total} slot${total === 1 ? "" : "s"}${window ? ` of ${window} tokens each` : ""}${total > 1 ? " (without -np they share one KV cache: requests at once that do not fit it together fail, and keel then sends them one at a time)" : ""}${small ? `; a slot holds less than keel's window of ${t.window}, so keel fits its prompts to ${window}` : ""}`,
      proves: "what the server says of its slots in /props and /slots",
      ...(small
        ? {
            fix: `start llama-server with a context of ${t.window} tokens a slot (-c ${t.window}; with -np ${total}, -c ${t.window * total}), or give keel --context-window ${window}`,
          }
        : {}),
    },
  };
}

/** The canary at the window a run uses: does the server take all of it, by its own count? */
async function windowCheck(
  t: PathTarget,
  slot: number | undefined,
  ollamaV1: boolean,
): Promise<Finding> {
  const window = Math.min(t.window, slot ?? Infinity);
  const r = await canary(t, window);
  const proves =
    "the server's own count of a prompt that opens with a marker: a prompt it cut counts less, one it cannot hold is refused. The model repeating the marker shows it read the start; a small or random model cannot, which says nothing about the server";
  const model = r.recalled
    ? "; the model repeated the marker"
    : "; the model did not repeat the marker";
  if (r.overContext || (r.status >= 400 && r.error && /context/i.test(r.error)))
    return {
      check: "window",
      ok: false,
      detail: `a prompt of ~${r.estimated} tokens (keel's window ${window}) was refused: ${r.error}`,
      proves,
      fix:
        t.provider === "ollama"
          ? `keel --context-window ${r.overContext?.window ?? Math.floor(window / 2)} (the model's context)`
          : `start the server with a context of ${window} tokens a slot (llama-server -c ${window}), or keel --context-window ${r.overContext?.window ?? "<its context>"}`,
    };
  if (r.status !== 200)
    return {
      check: "window",
      ok: false,
      detail: `the canary failed: ${r.status} ${r.error ?? ""}`,
      proves,
    };
  if (r.truncated)
    return {
      check: "window",
      ok: false,
      detail: `the server counted ${r.counted} tokens of a prompt keel estimated at ${r.estimated}: it cut the prompt without saying so${ollamaV1 ? " (Ollama's /v1 ignores num_ctx and runs in its default context)" : ""}${model}`,
      proves,
      fix: ollamaV1
        ? `use keel's native Ollama API: --provider ollama --ollama-url ${serverRoot(t.url)} (or start Ollama with OLLAMA_CONTEXT_LENGTH=${window})`
        : `give the server a context of ${window} tokens, or keel --context-window ${r.counted ?? "<what it holds>"}`,
    };
  return {
    check: "window",
    ok: true,
    detail: `held: the server counted ${r.counted ?? "?"} tokens of a prompt keel estimated at ${r.estimated} (window ${window})${model}`,
    proves,
  };
}

/** A request with a tool: refused, or a template that drops the tools (counted no longer). */
async function toolsCheck(t: PathTarget): Promise<Finding> {
  const prompt = "Say hello.";
  const window = Math.min(t.window, 4096);
  const [plain, tooled] = [
    await askServer(t, { prompt, window, maxTokens: 1 }),
    await askServer(t, { prompt, window, maxTokens: 1, tools: [TOOL] }),
  ];
  const proves =
    "a request with one tool, as keel's native mode sends them: the server's answer, and its count against the same request without the tool";
  if (tooled.status !== 200) {
    const jinja = /--jinja/.test(tooled.error ?? "");
    const unsupported = /does not support tools/.test(tooled.error ?? "");
    return {
      check: "tools",
      ok: unsupported,
      detail: `${tooled.status} ${tooled.error ?? ""}${unsupported ? " — keel describes the tools in the prompt instead" : ""}`,
      proves,
      ...(jinja
        ? { fix: "start llama-server with --jinja (without it every request with tools fails)" }
        : unsupported
          ? {}
          : { fix: "keel --tool-mode prompt (tools described in the prompt)" }),
    };
  }
  if (
    plain.counted !== undefined &&
    tooled.counted !== undefined &&
    tooled.counted <= plain.counted
  )
    return {
      check: "tools",
      ok: false,
      detail: `the server counted ${tooled.counted} tokens with a tool and ${plain.counted} without: the chat template drops the tools`,
      proves,
      fix: "keel --tool-mode prompt, or a chat template that renders tools (llama-server --chat-template-file)",
    };
  return {
    check: "tools",
    ok: true,
    detail: `the template carries them: ${tooled.counted ?? "?"} tokens with a tool, ${plain.counted ?? "?"} without`,
    proves,
  };
}

/** Two requests with one prefix: what the second took from the cache, by the server's counter. */
async function cacheCheck(t: PathTarget): Promise<Finding> {
  const base = canaryPrompt("KEEL-CACHE", Math.min(1024, Math.floor(t.window / 4)));
  const window = Math.min(t.window, 4096);
  await askServer(t, { prompt: `${base}\nFirst.`, window, maxTokens: 1 });
  const second = await askServer(t, { prompt: `${base}\nSecond.`, window, maxTokens: 1 });
  const proves =
    "two requests sharing a long prefix: the server's own count of what the second took from its cache";
  if (second.cached === undefined)
    return {
      check: "cache",
      ok: true,
      detail: `the server reports no cache counts${t.provider === "ollama" ? " (Ollama counts the whole prompt, cached or not)" : ""}: not checked; keel keeps its estimate`,
      proves,
    };
  if (second.cached === 0)
    return {
      check: "cache",
      ok: false,
      detail: `the second request took nothing from the cache (0 of ${second.counted ?? "?"} tokens): every turn evaluates its whole prompt again`,
      proves,
      fix: "start llama-server without --no-cache-prompt (and do not send cache_prompt: false)",
    };
  return {
    check: "cache",
    ok: true,
    detail: `the second request took ${second.cached} of ${second.counted ?? "?"} tokens from the cache`,
    proves,
  };
}

/** Ollama: how long the model stays loaded after a request (`/api/ps`'s `expires_at`). */
async function unloadCheck(root: string, model: string): Promise<Finding | undefined> {
  let body: { models?: Array<{ name?: string; model?: string; expires_at?: string }> };
  try {
    const res = await fetch(`${root.replace(/\/+$/, "")}/api/ps`, {
      signal: AbortSignal.timeout(3000),
    });
    body = (await res.json()) as typeof body;
  } catch {
    return undefined;
  }
  const tag = model.includes(":") ? model : `${model}:latest`;
  const loaded = body.models?.find((m) => m.name === tag || m.model === tag);
  const proves = "Ollama's /api/ps right after a request: when the model will be unloaded";
  const fix =
    "start Ollama with OLLAMA_KEEP_ALIVE=30m (a command, or a person's answer, between two turns then finds the model and its cache still loaded)";
  if (!loaded)
    return {
      check: "unload",
      ok: false,
      detail: "the model was unloaded right after the request (keep_alive 0)",
      proves,
      fix,
    };
  const seconds = Math.round((Date.parse(loaded.expires_at ?? "") - Date.now()) / 1000);
  if (!Number.isFinite(seconds)) return undefined;
  if (seconds < KEEP_ALIVE_MIN_S)
    return {
      check: "unload",
      ok: false,
      detail: `Ollama unloads the model ${seconds} s after each request (OLLAMA_KEEP_ALIVE): a longer command or question between two turns loads it again, with an empty cache`,
      proves,
      fix,
    };
  return {
    check: "unload",
    ok: true,
    detail: `the model stays loaded ${seconds > 1e7 ? "for ever" : `${seconds} s`} after a request`,
    proves,
  };
}
