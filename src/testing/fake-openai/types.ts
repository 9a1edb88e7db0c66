/** The fake OpenAI-compatible server's options, models, request shape and the state it keeps. */
import type { ServerResponse } from "node:http";
import type { ServerKind } from "../../models/openai/quirks.js";
import type { ChatBody, RecordedRequest, Reply, Script } from "../fake-ollama/types.js";
import type { Slots } from "./slots.js";

export interface FakeOpenAIModel {
  /** The context the server was started with (llama-server -c, vLLM --max-model-len). */
  contextLength?: number;
  /** The chat template llama.cpp's `/props` returns. */
  template?: string;
  /** Whether the template takes tools (llama.cpp's chat_template_caps, LM Studio's tool_use). */
  tools?: boolean;
  /** Characters per token; default: the fakes' tokenizer (src/testing/tokens.ts). */
  charsPerToken?: number;
  /** The context the model was trained for (llama.cpp's `n_ctx_train`). */
  trainedContext?: number;
  /** The model file's size in bytes (llama.cpp's `/v1/models` meta; default 78,088,448). */
  size?: number;
  /** Its tensor type (llama.cpp's `ftype`, e.g. "Q4_K - Medium"; default "all F32"). */
  ftype?: string;
}

export interface FakeOpenAIOptions {
  /** The server imitated: its discovery endpoints and error texts (default llama.cpp). */
  server?: ServerKind;
  models?: Record<string, FakeOpenAIModel>;
  script?: Script;
  /** llama.cpp started without --jinja: tools are refused with a 500. */
  requireJinja?: boolean;
  /** llama.cpp started with --no-cache-prompt: nothing of a prompt is served from the cache. */
  noCachePrompt?: boolean;
  /** llama.cpp's `build_info` (its version; default "b1-fake"). */
  version?: string;
  /** vLLM started without --enable-auto-tool-choice: tools are refused with a 400. */
  noAutoToolChoice?: boolean;
  /** Answer 400 to `stream_options` (default: for the generic and mlx servers). */
  rejectStreamOptions?: boolean;
  /** Require this bearer token. */
  apiKey?: string;
  /** llama.cpp's slots (`-np`; default 4), each with its own cached prompt. */
  slots?: number;
  /**
   * llama.cpp: false for a model it cannot shift (sliding-window attention without `--swa-full`,
   * recurrent models): `n_cache_reuse` is ignored, as llama-server does (default true).
   */
  shifts?: boolean;
  /** Every completion carries this id (servers that repeat one). */
  completionId?: string;
  /** Request arguments refused with a 400 naming the field (vLLM: pydantic's "Extra inputs are not permitted"). */
  rejectArguments?: string[];
}

/** An OpenAI chat request as received. */
export interface OpenAIChatBody {
  model: string;
  messages: Array<{
    role: string;
    content?: string | Array<{ type: string; text?: string }> | null;
    tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
    reasoning_content?: string;
  }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: ChatBody["tools"];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  response_format?: { type: string; json_schema?: { schema?: unknown } };
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  /** llama.cpp: the slot asked for. */
  id_slot?: number;
  /** llama.cpp: the shortest run of the slot's cache to shift into place (chunk reuse). */
  n_cache_reuse?: number;
  /** llama.cpp: false, nothing of the prompt is taken from the cache (the slot still keeps it). */
  cache_prompt?: boolean;
}

export interface FakeOpenAI {
  /** The server's root, e.g. http://127.0.0.1:40123 (llama.cpp's /props lives here). */
  url: string;
  /** The `/v1` root clients are given (`--base-url`). */
  baseUrl: string;
  requests: RecordedRequest[];
  /** The chat request bodies, in order (only model turns with `turnsOnly`: no response_format). */
  chatBodies(opts?: { turnsOnly?: boolean }): OpenAIChatBody[];
  /** What each chat completion answered, in order: how it finished and its usage. */
  answers: Array<{
    finish: string;
    usage: { prompt_tokens: number; completion_tokens: number };
  }>;
  violations: string[];
  setScript(script: Script): void;
  inject(...replies: Reply[]): void;
  close(): Promise<void>;
}

/** A request in flight on llama-server's one KV cache: its prompt tokens, and whether its batch failed. */
export interface Flight {
  tokens: number;
  failed: boolean;
}

/** One fake's settings, resolved from its options, and everything it keeps between requests. */
export interface FakeOpenAIState {
  kind: ServerKind;
  opts: FakeOpenAIOptions;
  models: Record<string, FakeOpenAIModel>;
  /** The server imitated is llama.cpp's llama-server. */
  llama: boolean;
  /** The model llama-server serves (the first one) and its name. */
  served: string;
  servedModel: FakeOpenAIModel;
  rejectStreamOptions: boolean;
  /** The served model's tokenizer. */
  count: (text: string) => number;
  slotCount: number;
  /** Without -np, llama-server shares one KV cache among its slots (`kv_unified`). */
  unifiedKv: boolean;
  slots: Slots;
  /** The requests in flight and their prompt tokens: on one KV cache they share the context. */
  flights: Set<Flight>;
  script: Script;
  /** Injected replies, answered before the script is asked again. */
  queue: Reply[];
  requests: RecordedRequest[];
  violations: string[];
  answers: FakeOpenAI["answers"];
  /** Responses left hanging, closed with the server. */
  hanging: Set<ServerResponse>;
}
