/** The fake Ollama server's wire types and the script interface. */
import type { TokenizerOptions } from "../tokens.js";

/** How fast a machine prefills and generates, in tokens per second. */
export interface MachineProfile {
  name: string;
  prefillTokensPerSec: number;
  generateTokensPerSec: number;
  /** Seconds to load the model (first request, or a changed num_ctx). */
  loadSec: number;
}

/** What one chat request cost, as the fake accounted it. */
export interface PrefillRecord {
  /** num_ctx in force (the request's, clamped to the model's context). */
  numCtx: number;
  /** Tokens of the whole prompt as sent. */
  sentTokens: number;
  /** Tokens of the prompt the model saw (after any truncation): Ollama's prompt_eval_count. */
  promptTokens: number;
  /** Tokens taken from the cache. */
  cachedTokens: number;
  /** Tokens evaluated (prefilled) for this request. */
  evaluatedTokens: number;
  /** Characters of the prompt shared with the previous request's prompt and reply. */
  cachedChars: number;
  promptChars: number;
  /** The prompt did not extend what the cache held: something before its end changed. */
  rewrote: boolean;
  /** The prompt was cut at the front to fit. */
  truncated: boolean;
  /** The model was (re)loaded for this request. */
  loaded: boolean;
  generatedTokens: number;
  /** Simulated seconds on the fake's machine profile: load + prefill + generation. */
  seconds: number;
  /** The prompt as the fake rendered it (for measurements that need the text). */
  rendered: string;
  /** A streamed reply the client closed before its end: how many content pieces it had been sent. */
  clientLeftAfter?: number;
}

export type Capability = "completion" | "tools" | "thinking" | "vision" | "embedding" | "insert";

export interface FakeModel {
  capabilities: Capability[];
  family?: string;
  /** The trained context (`/api/show`); num_ctx above it is clamped. Default 8192. */
  contextLength?: number;
  /** Characters per token, for a tokenizer denser or lighter than the fakes' (src/testing/tokens.ts). */
  charsPerToken?: number;
  /** Another tokenizer's characters per token by script, where it differs from the fakes' (src/testing/tokens.ts). */
  density?: TokenizerOptions;
  /** The chat template `/api/show` returns (default: a Hermes-style one for tool models). */
  template?: string;
  /** The model's digest in `/api/tags` (default: one digest for every model). */
  digest?: string;
}

export interface WireToolCall {
  id?: string;
  type?: string;
  function: { index?: number; name: string; arguments: unknown };
}

export interface WireMessage {
  role: string;
  content: string;
  thinking?: string;
  tool_calls?: WireToolCall[];
  tool_name?: string;
  tool_call_id?: string;
  images?: string[];
}

export interface ChatBody {
  model: string;
  messages?: WireMessage[];
  stream?: boolean;
  format?: unknown;
  tools?: Array<{
    type: string;
    function: { name: string; description?: string; parameters?: Record<string, unknown> };
  }>;
  options?: Record<string, unknown>;
  think?: unknown;
  keep_alive?: unknown;
  /** false: a prompt over num_ctx is refused (400), not cut at its front (Ollama ≥ 0.12). */
  truncate?: boolean;
  /** false: a reply that reaches num_ctx stops there (`length`), not shifted on (Ollama ≥ 0.12). */
  shift?: boolean;
}

/** What a script sees of one chat request. */
export interface ChatView {
  body: ChatBody;
  messages: WireMessage[];
  /** The request asks for structured output (`format` set). */
  structured: boolean;
  /** Top-level property names of the `format` schema, when it is one. */
  formatKeys: string[];
  /** Names of the tools in the request. */
  toolNames: string[];
  /** Assistant messages already in the conversation: 0 on the first turn. */
  turn: number;
  /** The tool messages after the last assistant message (the results the model is reacting to). */
  toolResults: WireMessage[];
  /** The last message of the conversation. */
  last: WireMessage | undefined;
  /** The text of all user messages, joined. */
  userText: string;
  /** The path prefix the client used before /api (per-test routing). */
  prefix: string;
  /** The prompt was over the window and the server cut its front (the model saw only the rest). */
  truncated: boolean;
  /** Tokens of the prompt the model saw (what the final line reports as prompt_eval_count). */
  promptTokens: number;
  /** The window the runner holds (num_ctx, capped by the model's context; unbounded when unknown). */
  numCtx: number;
}

export interface ScriptedCall {
  name: string;
  /** An object, as Ollama sends; a string imitates servers that send JSON text. */
  arguments: Record<string, unknown> | string;
}

/** A normal reply. */
export interface AnswerReply {
  content?: string;
  thinking?: string;
  toolCalls?: ScriptedCall[];
  /** classic: calls in their own done:false line; native: calls in the final line. */
  placement?: "classic" | "native";
  /** How many stream lines the content is split into (default 3). */
  pieces?: number;
  /** How many stream lines the thinking is split into (default 2). */
  thinkingPieces?: number;
  doneReason?: "stop" | "length";
  /** Wait this long before the first byte. */
  delayMs?: number;
  /** Wait this long between stream chunks (a server generating as it sends; default 0). */
  paceMs?: number;
  /** Imitate servers that return calls to tools the request did not offer. */
  allowUnknownTools?: boolean;
  /** Send content that is not valid JSON even though `format` was set. */
  allowInvalidJson?: boolean;
  /**
   * Imitate a server that ignores the generation budget (`num_predict`, and `shift: false` at the
   * window's end): the whole reply is sent however long it is, and said to have stopped normally.
   */
  ignoreBudget?: boolean;
}

export type FaultReply =
  | { fault: "status"; status: number; error: string; delayMs?: number }
  | { fault: "reset-before" }
  | { fault: "cut-mid-stream" }
  | { fault: "no-done" }
  | { fault: "stream-error"; error: string }
  | { fault: "hang" }
  | { fault: "malformed-line"; then: AnswerReply };

export type Reply = AnswerReply | FaultReply;
export type Script = (req: ChatView) => Reply | Promise<Reply>;

export interface RecordedRequest {
  method: string;
  path: string;
  prefix: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, or the raw text when it did not parse. */
  body: unknown;
  at: number;
  /** A streamed answer the client stopped reading: the content pieces sent before it left. */
  clientLeftAfter?: number;
  /** The status the fake answered with (OpenAI-compatible fake), once it has answered. */
  status?: number;
  /** The error a stream answered 200 carried instead of a reply (llama-server's decode failures). */
  streamedError?: string;
}

export interface FakeOllamaOptions {
  models?: Record<string, FakeModel>;
  script?: Script;
  /** The machine whose prefill and generation rates the fake reports and accounts (default gpu). */
  machine?: MachineProfile;
  /** `/api/version` (default 0.12.10). */
  version?: string;
  /** OLLAMA_KEEP_ALIVE in ms: how long a model stays loaded after a request (default 5 minutes). */
  keepAliveMs?: number;
  /** OLLAMA_CONTEXT_LENGTH: the context of a request that names no num_ctx, as `/v1` requests do (default 4096). */
  defaultContext?: number;
}

export interface FakeOllama {
  /** Base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  requests: RecordedRequest[];
  /** The POST /api/chat requests, in order. */
  chatRequests(): RecordedRequest[];
  /** Chat request bodies, optionally only those from model turns (no `format`). */
  chatBodies(opts?: { turnsOnly?: boolean }): ChatBody[];
  /** What each answered chat request cost: cache reuse, prefill, truncation, simulated seconds. */
  prefill: PrefillRecord[];
  /** Script mistakes the fake caught (e.g. a call to a tool the request did not offer). */
  violations: string[];
  setScript(script: Script): void;
  /** The next chat requests get these replies, in order, before the script is asked again. */
  inject(...replies: Reply[]): void;
  /** Runs when a chat request arrives, before it is answered (e.g. to kill a client at turn k). */
  onChat(hook: ((req: ChatView, index: number) => void) | undefined): void;
  close(): Promise<void>;
}

/** What a script sees of a chat request. */
export function viewOf(
  body: ChatBody,
  prefix: string,
  seen: { truncated: boolean; promptTokens: number; numCtx?: number } = {
    truncated: false,
    promptTokens: 0,
  },
): ChatView {
  const messages = body.messages ?? [];
  let lastAssistant = -1;
  messages.forEach((m, i) => {
    if (m.role === "assistant") lastAssistant = i;
  });
  const format = body.format;
  return {
    body,
    messages,
    structured: format !== undefined && format !== null && format !== "",
    formatKeys:
      format && typeof format === "object"
        ? Object.keys((format as { properties?: object }).properties ?? {})
        : [],
    toolNames: (body.tools ?? []).map((t) => t.function.name),
    turn: messages.filter((m) => m.role === "assistant").length,
    toolResults:
      lastAssistant >= 0 ? messages.slice(lastAssistant + 1).filter((m) => m.role === "tool") : [],
    last: messages[messages.length - 1],
    userText: messages
      .filter((m) => m.role === "user")
      .map((m) => m.content)
      .join("\n"),
    prefix,
    numCtx: Infinity,
    ...seen,
  };
}
