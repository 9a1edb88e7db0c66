/**
 * What the fake says where it imitates llama.cpp's llama-server, as measured on a real one
 * (docs/real-servers.md): `/health`, `/props`, `/v1/models`, `/tokenize`, `/detokenize`,
 * `/apply-template`, `/slots`, the `timings` object, usage with `prompt_tokens_details`, and how a
 * reply is cut when it reaches `max_tokens` or the end of the slot's context.
 */
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { renderPrompt, type MachineProfile } from "../fake-ollama/prefill.js";
import type { ChatBody } from "../fake-ollama/types.js";
import { countTokens, cutToTokens } from "../tokens.js";
import type { ServerKind } from "../../models/openai/quirks.js";
import { asChatBody, sendJson, type WireCall } from "./replies.js";
import type { FakeOpenAIModel, OpenAIChatBody } from "./types.js";
import type { Slots } from "./slots.js";

const ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** llama-server's ids: 32 random letters and digits (tool calls), `chatcmpl-` + 32 (completions). */
export function llamaId(prefix = ""): string {
  const bytes = randomBytes(32);
  let out = prefix;
  for (const b of bytes) out += ALNUM[b % ALNUM.length];
  return out;
}

/** The prompt as the fake's template renders it, with the assistant turn opened. */
export function applyTemplate(body: ChatBody): string {
  return `${renderPrompt(body)}<|im_start|>assistant\n`;
}

/** JSON as Python's json.dumps writes it (the `tojson` of chat templates): ", " and ": ". */
export function pyJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(pyJson).join(", ")}]`;
  if (v && typeof v === "object")
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`)
      .join(", ")}}`;
  return JSON.stringify(v) ?? "null";
}

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The head of a call as Qwen2.5 writes it, up to its arguments. */
const callHead = (name: string, first: boolean) =>
  `${first ? "" : "\n"}<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": `;

/** The text a reply generates (what `max_tokens` and the context count), as Qwen2.5 writes it. */
export function generatedText(content: string, calls: WireCall[]): string {
  return (
    content +
    calls
      .map(
        (c, i) =>
          `${callHead(c.function.name, !content && i === 0)}${pyJson(jsonOrText(c.function.arguments))}}\n</tool_call>`,
      )
      .join("")
  );
}

/**
 * A reply cut at `budget` tokens, the way llama-server's parser returns what was generated: the
 * content up to the cut, whole calls before it, and a call cut inside its arguments with the
 * arguments text so far (`{` when cut right after it opened; a call cut inside its name is not
 * returned).
 */
export function cutReply(
  content: string,
  calls: WireCall[],
  budget: number,
): { content: string; calls: WireCall[]; tokens: number; cut: boolean } {
  const whole = countTokens(generatedText(content, calls));
  if (whole <= budget) return { content, calls, tokens: whole, cut: false };
  const kept = cutToTokens(content, budget);
  if (kept.length < content.length || calls.length === 0)
    return { content: kept, calls: [], tokens: budget, cut: true };
  const out: WireCall[] = [];
  for (const c of calls) {
    const before = generatedText(content, out);
    if (countTokens(generatedText(content, [...out, c])) <= budget) {
      out.push(c);
      continue;
    }
    const head = before + callHead(c.function.name, !content && out.length === 0);
    const room = budget - countTokens(head);
    const so = cutToTokens(pyJson(jsonOrText(c.function.arguments)), room) || "{";
    if (room > 0) out.push({ ...c, function: { ...c.function, arguments: so } });
    break;
  }
  return { content, calls: out, tokens: budget, cut: true };
}

/** llama-server's `timings` for a request: cache_n, prompt_n and the time each part took. */
export function timings(
  cacheN: number,
  promptN: number,
  predictedN: number,
  machine: MachineProfile,
): Record<string, number> {
  const promptMs = (promptN / machine.prefillTokensPerSec) * 1000;
  const predictedMs = (predictedN / machine.generateTokensPerSec) * 1000;
  return {
    cache_n: cacheN,
    prompt_n: promptN,
    prompt_ms: promptMs,
    prompt_per_token_ms: promptN ? promptMs / promptN : 0,
    prompt_per_second: promptN ? (promptN / promptMs) * 1000 : 0,
    predicted_n: predictedN,
    predicted_ms: predictedMs,
    predicted_per_token_ms: predictedN ? predictedMs / predictedN : 0,
    predicted_per_second: predictedN ? (predictedN / predictedMs) * 1000 : 0,
  };
}

/**
 * `/v1/models` as llama-server answers it: the one model it serves, named by its `--alias` or else
 * its file name (the fake's model name stands for either); a request's `model` is ignored.
 */
export function llamaModels(name: string, m: FakeOpenAIModel): unknown {
  return {
    models: [{ name, model: name, type: "model", capabilities: ["completion"] }],
    object: "list",
    data: [
      {
        id: name,
        object: "model",
        created: Math.floor(Date.now() / 1000),
        owned_by: "llamacpp",
        meta: {
          vocab_type: 2,
          n_vocab: 151936,
          n_ctx: m.contextLength ?? 8192,
          n_ctx_train: m.trainedContext ?? 32768,
          n_embd: 64,
          n_params: 19522112,
          size: m.size ?? 78088448,
          ftype: m.ftype ?? "all F32",
        },
      },
    ],
  };
}

/**
 * The llama.cpp-only routes: `/health`, `/props`, `/tokenize`, `/detokenize`, `/apply-template`,
 * `/slots`. Returns false for any other route.
 */
export function llamaRoute(
  req: { method: string; route: string; body: unknown },
  res: ServerResponse,
  server: {
    name: string;
    model: FakeOpenAIModel;
    slots: Slots;
    slotCount: number;
    version: string;
  },
): boolean {
  const { method, route, body } = req;
  const ctx = server.model.contextLength ?? 8192;
  if (method === "GET" && route === "/health") {
    sendJson(res, 200, { status: "ok" });
    return true;
  }
  if (method === "GET" && route === "/props") {
    sendJson(res, 200, {
      default_generation_settings: { id: 0, n_ctx: ctx, params: { n_predict: -1 } },
      total_slots: server.slotCount,
      model_alias: server.name,
      model_path: `/models/${server.name.endsWith(".gguf") ? server.name : `${server.name}.gguf`}`,
      modalities: { vision: false, audio: false },
      chat_template: server.model.template ?? "{{ messages }}",
      chat_template_caps: {
        supports_tools: server.model.tools ?? true,
        supports_tool_calls: server.model.tools ?? true,
      },
      model_ftype: server.model.ftype ?? "all F32",
      build_info: server.version,
    });
    return true;
  }
  const fields = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if (method === "POST" && route === "/tokenize") {
    const text = typeof fields.content === "string" ? fields.content : "";
    sendJson(res, 200, { tokens: pseudoTokens(text) });
    return true;
  }
  if (method === "POST" && route === "/apply-template") {
    const chat = asChatBody({ model: "", ...fields } as unknown as OpenAIChatBody);
    sendJson(res, 200, { prompt: applyTemplate(chat) });
    return true;
  }
  if (method === "GET" && route === "/slots") {
    sendJson(
      res,
      200,
      server.slots
        .view()
        .map((s) => ({ id: s.id, n_ctx: ctx, is_processing: false, n_tokens: s.tokens })),
    );
    return true;
  }
  return false;
}

/** Token ids for `/tokenize`: as many as the fakes count, stable for the same pieces. */
function pseudoTokens(text: string): number[] {
  const n = countTokens(text);
  return Array.from(
    { length: n },
    (_, i) => (text.charCodeAt(i % Math.max(1, text.length)) * 31 + i) % 151643,
  );
}

/** llama-server's 400 for a field of the wrong type (it ignores fields it does not know). */
export function wrongField(b: OpenAIChatBody): string | undefined {
  for (const key of ["max_tokens", "max_completion_tokens", "temperature"] as const) {
    const v = b[key];
    if (v !== undefined && v !== null && typeof v !== "number")
      return `Field '${key}': [json.exception.type_error.302] type must be number, but is ${typeof v}`;
  }
  if (b.stream !== undefined && typeof b.stream !== "boolean")
    return `Field 'stream': [json.exception.type_error.302] type must be boolean, but is ${typeof b.stream}`;
  return undefined;
}

/**
 * The 400 for a prompt too long for the context: llama-server refuses one that fills the slot's
 * context (>=, exceed_context_size_error with the counts); vLLM and the others one over it.
 */
export function overContext(
  kind: ServerKind,
  promptTokens: number,
  context: number,
): { message: string; extra?: Record<string, unknown> } | undefined {
  if (kind === "llama.cpp")
    return promptTokens >= context
      ? {
          message: `request (${promptTokens} tokens) exceeds the available context size (${context} tokens), try increasing it`,
          extra: {
            type: "exceed_context_size_error",
            n_prompt_tokens: promptTokens,
            n_ctx: context,
          },
        }
      : undefined;
  if (promptTokens <= context) return undefined;
  return {
    message:
      kind === "vllm"
        ? `This model's maximum context length is ${context} tokens. However, you requested ${promptTokens} tokens in the messages. Please reduce the length of the messages.`
        : "the request exceeds the available context size, try increasing it",
  };
}
