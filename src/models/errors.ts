/**
 * Model server failures, classified once: what happened, whether a retry can help, and what the
 * user should do about it. ChatOllama surfaces ollama-js errors unchanged (docs/ollama-protocol.md §7),
 * so classification reads `status_code`, `name` and the fetch error's cause.
 */
import type { Provider } from "./provider.js";
import { serverErrorRule } from "./openai/quirks.js";

export type ModelErrorKind =
  | "unreachable"
  | "model_missing"
  | "bad_request"
  | "overloaded"
  | "server_error"
  | "dropped"
  | "timeout"
  | "protocol"
  /** The server's own tool-call parser failed on the model's output: the same request fails again. */
  | "tool_parse"
  /** The model has no tool support on this server: tools must go in the prompt. */
  | "no_tools"
  /** The server cut the prompt to fit its window (or refused it as over its context), even after keel refitted it. */
  | "truncated"
  /** The server's context cannot hold keel's own fixed prompt (system prompt and tools). */
  | "context_small"
  /** The server refused the credentials (401/403). */
  | "auth"
  /** The server could not turn a JSON Schema (a tool's, or the response format's) into a grammar. */
  | "schema";

export interface ClassifiedError {
  kind: ModelErrorKind;
  retryable: boolean;
  status?: number;
  message: string;
  /** What the user can do, when the server's own error text says (openai/quirks.ts). */
  fix?: string;
  /** A prompt over the server's context: the server's count of it and its context (n_ctx). */
  context?: OverContext;
}

/** What a server said of a prompt it refused as over its context. */
export interface OverContext {
  /** The prompt's tokens as the server counted them. */
  prompt: number;
  /** The server's context (llama.cpp's n_ctx of the slot, vLLM's max_model_len). */
  window: number;
}

/**
 * The numbers of an over-context refusal: llama.cpp's `exceed_context_size_error` body
 * (`n_prompt_tokens`, `n_ctx`, kept by the openai SDK as `error`) or its message ("request (3053
 * tokens) exceeds the available context size (512 tokens)"), or vLLM's ("maximum context length
 * is 8192 tokens. However, you requested 9000 tokens").
 */
export function overContext(err: unknown, message: string): OverContext | undefined {
  const body = (err as { error?: { n_prompt_tokens?: unknown; n_ctx?: unknown } } | undefined)
    ?.error;
  if (typeof body?.n_prompt_tokens === "number" && typeof body.n_ctx === "number")
    return { prompt: body.n_prompt_tokens, window: body.n_ctx };
  const llama = /\((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/.exec(
    message,
  );
  if (llama) return { prompt: Number(llama[1]), window: Number(llama[2]) };
  const vllm = /maximum context length is (\d+) tokens\. However, you requested (\d+) tokens/.exec(
    message,
  );
  if (vllm) return { prompt: Number(vllm[2]), window: Number(vllm[1]) };
  return undefined;
}

function causeCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Ollama's server-side tool-call parsers fail deterministically on some outputs, as an HTTP 500 or
 * as a streamed error line (docs/servers.md: ollama issues 11704, 11781, 18563, 14834).
 */
const TOOL_PARSE =
  /error parsing tool call|XML syntax error|failed to parse tool call|tool call.{0,40}(?:parse|invalid)|unexpected end of JSON input.{0,40}tool/i;

/**
 * A discovery request (the server's first contact) that got no whole reply within its deadline:
 * something accepts connections there but does not answer. Not retried — a server answers these at
 * once, and one that stays silent would hold keel for every retry.
 */
export class NoReplyError extends Error {
  override name = "NoReplyError";
  constructor(
    readonly url: string,
    readonly ms: number,
  ) {
    super(`no reply from ${url} within ${Math.round(ms / 100) / 10} s`);
  }
}

function causeNamed(err: unknown, names: string[]): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === "object"; depth++) {
    if (names.includes((e as { name?: string }).name ?? "")) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * A reply from something that is not the model server keel was told of (a listing endpoint it
 * does not have, a web page): the same request gets the same answer, so it is never retried.
 */
export class ProtocolError extends Error {
  override name = "ProtocolError";
}

/**
 * An error body that is an HTML page: no model server answers its API that way; web servers do,
 * and proxies in front of a server that is restarting (502, 503, 504: retried as busy).
 */
const WEB_PAGE = /<!doctype html|<html[\s>]/i;

/** Statuses of a server (or its proxy) that is busy or restarting: a later attempt can succeed. */
const BUSY = new Set([429, 502, 503, 504]);

/** An error body as people read it: a web page as a short line, anything else as it is. */
export const readableBody = (body: string): string =>
  WEB_PAGE.test(body) ? webPageText(body) : body;

/** A web page as a short line: its title and text, without the markup. */
function webPageText(html: string): string {
  const text = html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return `a web page ("${text.length > 120 ? `${text.slice(0, 120)}…` : text}"), not a model server's reply`;
}

/**
 * Sorts any error thrown by a model call into a kind: ollama-js errors (`status_code`), the openai
 * SDK's (`status`), fetch failures (the cause's code), keel's own deadlines.
 */
export function classifyModelError(err: unknown): ClassifiedError {
  const e = err as
    { name?: string; message?: string; status_code?: number; status?: number } | undefined;
  const raw = e?.status_code ?? e?.status;
  const status = typeof raw === "number" ? raw : undefined;
  const body = e?.message ?? String(err);
  const page = WEB_PAGE.test(body);
  const message = page ? `${status ? `HTTP ${status}, ` : ""}${webPageText(body)}` : body;
  if (e?.name === "ProtocolError" || (page && !(status && BUSY.has(status))))
    return { kind: "protocol", retryable: false, ...(status ? { status } : {}), message };
  if (TOOL_PARSE.test(message) && (status === undefined || status >= 500))
    return { kind: "tool_parse", retryable: false, ...(status ? { status } : {}), message };
  if (status === 400 && /does not support tools/.test(message))
    return { kind: "no_tools", retryable: false, status, message };
  if (status === 401 || status === 403) return { kind: "auth", retryable: false, status, message };
  const rule = status !== undefined && status >= 400 ? serverErrorRule(message) : undefined;
  if (rule) {
    const context = rule.kind === "truncated" ? overContext(err, message) : undefined;
    return {
      kind: rule.kind,
      retryable: false,
      status,
      message,
      fix: rule.fix,
      ...(context ? { context } : {}),
    };
  }
  if (err instanceof NoReplyError) return { kind: "unreachable", retryable: false, message };
  if (causeNamed(err, ["ModelTimeoutError", "TimeoutError"])) {
    return { kind: "timeout", retryable: true, message };
  }
  if (status !== undefined) {
    if (status === 404) return { kind: "model_missing", retryable: false, status, message };
    if (BUSY.has(status)) {
      return { kind: "overloaded", retryable: true, status, message };
    }
    if (status >= 500) return { kind: "server_error", retryable: true, status, message };
    return { kind: "bad_request", retryable: false, status, message };
  }
  const code = causeCode(err);
  if (
    code === "ECONNREFUSED" ||
    code === "ENOTFOUND" ||
    code === "EHOSTUNREACH" ||
    code === "EAI_AGAIN"
  ) {
    return { kind: "unreachable", retryable: true, message: `${message} (${code})` };
  }
  if (
    code === "ECONNRESET" ||
    code === "UND_ERR_SOCKET" ||
    code === "EPIPE" ||
    /terminated|other side closed|socket hang up|Did not receive done|aborted/i.test(message)
  ) {
    return { kind: "dropped", retryable: true, message };
  }
  if (/fetch failed|^Connection error/i.test(message))
    return { kind: "unreachable", retryable: true, message };
  if (/Failed to parse|Unexpected token|JSON/i.test(message))
    return { kind: "protocol", retryable: true, message };
  // A streamed {"error": ...} line arrives as a plain Error: the runner failed mid-answer.
  return { kind: "server_error", retryable: true, message };
}

/** Which server a failure came from, and what its own error text says to do. */
export interface ServerOrigin {
  provider?: Provider;
  fix?: string;
  /** The context the prompt needs (`context_small`), for the advice. */
  need?: number;
  /** An over-context refusal's numbers, for keel to refit by. */
  context?: OverContext;
}

/** A model server failure that retries could not fix; the CLI turns it into exit code 3. */
export class ModelServerError extends Error {
  override name = "ModelServerError";
  constructor(
    readonly kind: ModelErrorKind,
    readonly url: string,
    readonly model: string,
    readonly detail: string,
    readonly attempts: number,
    readonly origin: ServerOrigin = {},
  ) {
    super(
      origin.provider === "openai"
        ? describeOpenAIError(kind, url, model, detail, attempts, origin)
        : describeModelError(kind, url, model, detail, attempts),
    );
  }
}

/** One sentence on what failed and one on what to do, for an OpenAI-compatible server. */
export function describeOpenAIError(
  kind: ModelErrorKind,
  url: string,
  model: string,
  detail: string,
  attempts: number,
  { fix, need }: Pick<ServerOrigin, "fix" | "need"> = {},
): string {
  const tries = attempts > 1 ? ` (after ${attempts} attempts)` : "";
  const server = `the OpenAI-compatible server at ${url}`;
  const todo: Partial<Record<ModelErrorKind, string>> = {
    unreachable:
      "Start it (see `keel models --provider openai --help` for each server's start command), or point keel at it with --base-url / KEEL_BASE_URL",
    model_missing: `List its models with \`keel models --provider openai --base-url ${url}\` and choose one with --model`,
    overloaded: "Wait for other requests to finish, then run the same command again to resume",
    timeout:
      "A large model may still be loading; raise requestTimeoutMs or try again — the run resumes where it stopped",
    dropped: "Check the server's log, then run the same command again to resume",
    protocol: "Check that --base-url points at the server's /v1 root",
    truncated:
      "Start the server with a larger context (llama-server -c, vLLM --max-model-len, LM Studio's context length)",
    context_small: `Start the server with ${need ? `a context of at least ${need} tokens` : "a larger context"}, e.g. llama-server -c ${need ?? 16384} (its slots share -c: with -np 4 each slot gets a quarter), vLLM --max-model-len ${need ?? 16384}, or LM Studio's context length; a smaller --context-window cannot help`,
    auth: "Give the server's API key with --api-key or OPENAI_API_KEY (keel sends it as a Bearer token)",
    schema:
      "Run with --tool-mode prompt (tools described in the prompt need no grammar), or remove the tool whose schema the server cannot convert",
  };
  const what = fix ?? todo[kind] ?? "Check the server's log; run the same command again to resume";
  const forModel = model ? ` for model "${model}"` : "";
  return `${server} failed (${kind})${tries}${forModel}: ${detail}. ${what[0]!.toUpperCase()}${what.slice(1)}.`;
}

/** One sentence on what failed and one on what to do (Ollama). */
export function describeModelError(
  kind: ModelErrorKind,
  url: string,
  model: string,
  detail: string,
  attempts: number,
): string {
  const tries = attempts > 1 ? ` (after ${attempts} attempts)` : "";
  switch (kind) {
    case "unreachable":
      return `cannot reach the Ollama server at ${url}${tries}: ${detail}. Start it with \`ollama serve\`, or point keel at it with --ollama-url / OLLAMA_HOST.`;
    case "model_missing":
      return `the Ollama server at ${url} has no model "${model}": ${detail}. Download it with \`ollama pull ${model}\`, or choose another with --model (see \`ollama list\`).`;
    case "no_tools":
      return `model "${model}" does not support tool calling on ${url}: ${detail}. keel describes the tools in the prompt instead (--tool-mode prompt); for native calls choose a tools-capable model (e.g. qwen3:8b, llama3.1:8b) with --model.`;
    case "tool_parse":
      return `the Ollama server at ${url} failed to parse the model's tool call${tries}: ${detail}. keel re-asks such turns with the tools in the prompt; to avoid the server's parser altogether run with --tool-mode prompt.`;
    case "truncated":
      return `the Ollama server at ${url} could not take the whole prompt within the model's context window${tries}: ${detail}. Raise the window (--context-window, or OLLAMA_CONTEXT_LENGTH on the server) or use a model with a larger context.`;
    case "bad_request":
      return `the Ollama server at ${url} rejected the request for "${model}": ${detail}.`;
    case "auth":
      return `the server at ${url} refused keel's credentials: ${detail}. Ollama itself takes no key; a proxy in front of it does — check its settings, or point --ollama-url at the server itself.`;
    case "context_small":
      return `the context of "${model}" on ${url} is too small for keel: ${detail}. Raise it with --context-window (keel asks Ollama for that num_ctx) or OLLAMA_CONTEXT_LENGTH on the server, or use a model with a larger context.`;
    case "overloaded":
      return `the Ollama server at ${url} stayed busy${tries}: ${detail}. Wait for other requests to finish or raise OLLAMA_NUM_PARALLEL / OLLAMA_MAX_QUEUE, then run the same command again to resume.`;
    case "timeout":
      return `the Ollama server at ${url} did not answer in time${tries}: ${detail}. A large model may still be loading; raise requestTimeoutMs or try again — the run resumes where it stopped.`;
    case "dropped":
      return `the connection to the Ollama server at ${url} kept dropping${tries}: ${detail}. Check the server's log (\`journalctl -u ollama\` or the terminal running \`ollama serve\`), then run the same command again to resume.`;
    case "protocol":
      return `the Ollama server at ${url} sent a reply keel could not read${tries}: ${detail}. Check that the URL points at Ollama, not another service.`;
    default:
      return `the Ollama server at ${url} failed${tries}: ${detail}. Check its log; run the same command again to resume.`;
  }
}
