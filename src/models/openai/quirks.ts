/**
 * What each OpenAI-compatible server needs, as named profiles (docs/servers.md): the request options it
 * takes, where it says its context size, and its own error texts mapped to what the user can do.
 * Pure data and pure functions; discovery (probe.ts) picks the profile.
 */

/** The servers keel knows; `generic` is any other OpenAI-compatible server. */
export const SERVER_KINDS = ["llama.cpp", "lmstudio", "vllm", "mlx", "generic"] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

export interface ServerQuirks {
  /** What people call it. */
  label: string;
  /**
   * Ask for usage in the stream (`stream_options.include_usage`). Without it there is no
   * `usage.prompt_tokens` to check a prompt against; some servers answer 400 to the field
   * (langchainjs 6533).
   */
  streamUsage: boolean;
  /** Send `parallel_tool_calls: false` (servers whose parallel calls break under streaming). */
  serialCalls: boolean;
  /** How the user starts the server with tools on (README and error fixes). */
  start: string;
  /**
   * Takes `n_cache_reuse`: moves runs of its cached prompt found further on into place (KV
   * shifting) instead of evaluating them again.
   */
  shiftsCache: boolean;
  /**
   * Its slots may share one KV cache (llama-server without `-np`): requests in flight together
   * may not fit it (models/shared-context.ts).
   */
  sharedContext: boolean;
}

/**
 * The `n_cache_reuse` a run sends (settings `cacheReuse`), where its server shifts its cache;
 * undefined elsewhere or when off. The calls that send it fold for it (history/fit.ts `shift`).
 */
export function cacheShift(s: { server?: ServerKind; cacheReuse?: number }): number | undefined {
  return s.cacheReuse && s.server && QUIRKS[s.server].shiftsCache ? s.cacheReuse : undefined;
}

export const QUIRKS: Record<ServerKind, ServerQuirks> = {
  "llama.cpp": {
    label: "llama.cpp llama-server",
    streamUsage: true,
    serialCalls: false,
    start: "llama-server -m model.gguf --jinja -c 32768 --port 8080",
    shiftsCache: true,
    sharedContext: true,
  },
  lmstudio: {
    label: "LM Studio",
    streamUsage: true,
    // Parallel calls break under streaming (lmstudio-bug-tracker 759).
    serialCalls: true,
    start: "lms server start --port 1234 (load the model with a context length of 32768 or more)",
    shiftsCache: false,
    sharedContext: false,
  },
  vllm: {
    label: "vLLM",
    streamUsage: true,
    serialCalls: false,
    start:
      "vllm serve <model> --enable-auto-tool-choice --tool-call-parser <parser, e.g. hermes or qwen3_coder> --max-model-len 32768",
    shiftsCache: false,
    sharedContext: false,
  },
  mlx: {
    label: "mlx_lm.server",
    streamUsage: false,
    serialCalls: true,
    start: "mlx_lm.server --model <model> --port 8080",
    shiftsCache: false,
    sharedContext: false,
  },
  generic: {
    label: "OpenAI-compatible server",
    streamUsage: false,
    serialCalls: false,
    start: "start the server with tool calling enabled",
    shiftsCache: false,
    sharedContext: false,
  },
};

/** A server's error text → what keel makes of it and what the user can do. */
export interface ServerErrorRule {
  pattern: RegExp;
  /** no_tools: native tool calling is off on this server (keel falls back to tools in the prompt). */
  kind: "no_tools" | "truncated" | "bad_request" | "schema";
  fix: string;
}

export const SERVER_ERRORS: ServerErrorRule[] = [
  {
    pattern: /tools param requires --jinja/i,
    kind: "no_tools",
    fix: "start llama-server with --jinja for native tool calls (keel uses tools in the prompt until then)",
  },
  {
    pattern: /tool choice requires --enable-auto-tool-choice/i,
    kind: "no_tools",
    fix: "start vLLM with --enable-auto-tool-choice --tool-call-parser <parser for the model, e.g. hermes, llama3_json, qwen3_coder> (keel uses tools in the prompt until then)",
  },
  {
    pattern: /does not support tools|tool(?:s| calling) (?:is )?not supported/i,
    kind: "no_tools",
    fix: "choose a model whose chat template supports tools, or keep --tool-mode prompt",
  },
  {
    pattern:
      /exceeds? the available context size|maximum context length is|context length exceeded|input length exceeds the context length|prompt is too long|n_ctx/i,
    kind: "truncated",
    fix: "the prompt is larger than the server's context: restart the server with a larger context (llama-server -c, vLLM --max-model-len, LM Studio's context length)",
  },
  {
    pattern:
      /JSON schema conversion failed|failed to convert.{0,40}schema|Unable to generate parser for this template|grammar/i,
    kind: "schema",
    fix: "the server could not turn a JSON Schema (a tool's parameters, or the answer's format) into a grammar; keel asks such turns again with the tools in the prompt — to avoid it altogether run with --tool-mode prompt",
  },
  {
    pattern: /stream_options/i,
    kind: "bad_request",
    fix: "the server rejects stream_options where keel cannot leave it out; use a newer server version",
  },
];

/** The rule an error message matches, if any. */
export function serverErrorRule(message: string): ServerErrorRule | undefined {
  return SERVER_ERRORS.find((r) => r.pattern.test(message));
}

/** Guesses the server from what it answered to discovery (see probe.ts). */
export function serverKindOf(seen: {
  props?: boolean;
  lmstudioApi?: boolean;
  maxModelLen?: boolean;
  modelId: string;
  ownedBy?: string;
}): ServerKind {
  if (seen.props) return "llama.cpp";
  if (seen.lmstudioApi) return "lmstudio";
  if (seen.maxModelLen || seen.ownedBy === "vllm") return "vllm";
  if (/(^|\/)mlx-community\/|mlx/i.test(seen.modelId)) return "mlx";
  return "generic";
}
