/**
 * The canary: plain chat requests that prove what a server does with a prompt, read from what the
 * server itself reports — its count of the prompt, its cache counters, its refusals and errors —
 * and, where the model can, from its answer. A prompt opens with a known marker and asks it back:
 * a server that cut the prompt's front counts fewer tokens than were sent (the proof, whatever the
 * model); a model that repeats the marker read the whole prompt (a small or random model cannot,
 * and that proves nothing about the server). `keel doctor` and `keel calibrate` share it.
 */
import { estimateTokens } from "../guard/token-estimate.js";
import type { Provider } from "./provider.js";

/** The server a canary goes to: Ollama's native API, or an OpenAI-compatible `/v1` root. */
export interface CanaryServer {
  provider: Provider;
  /** Ollama's root, or the `/v1` root. */
  url: string;
  model: string;
  apiKey?: string;
  fetchImpl?: typeof fetch;
  /** Most ms one request may take (default 120 s: a long prompt on a CPU). */
  timeoutMs?: number;
}

/** What the server reported of one request. */
export interface ServerReading {
  /** HTTP status (0: no answer). */
  status: number;
  /** The server's count of the prompt (`prompt_eval_count`, `usage.prompt_tokens`). */
  counted?: number;
  /** Prompt tokens it took from its cache (llama.cpp: `cached_tokens`, `timings.cache_n`). */
  cached?: number;
  /** Ollama: ns spent loading the model for this request. */
  loadNs?: number;
  /** Its words for a refusal or an error. */
  error?: string;
  /** A refusal of a prompt over its context, with the counts where it gives them. */
  overContext?: { prompt?: number; window?: number };
  reply: string;
  finish?: string;
  /** Tokens generated. */
  generated?: number;
  ms: number;
}

/** The sentence the canary asks back (the marker opens the prompt). */
export const CANARY_QUESTION =
  "What is the code given at the very start of this message? Reply with the code only.";

/** A marker no text contains by chance. */
export const canaryMarker = () =>
  `KEEL-CANARY-${Math.random().toString(36).slice(2, 10).toUpperCase()}`;

/**
 * A prompt of about `tokens` tokens (keel's estimate): the marker, filler that never repeats (a
 * line of varied words and numbers per ~20 tokens, so no tokenizer compresses it oddly), and the
 * question.
 */
export function canaryPrompt(marker: string, tokens: number): string {
  const head = `The code is ${marker}. Remember it; it is asked for at the end.\n`;
  const tail = `\n${CANARY_QUESTION}`;
  const lines: string[] = [];
  let used = estimateTokens(head + tail);
  const places = ["harbour", "mill", "orchard", "bridge", "quarry", "market", "chapel", "ferry"];
  const things = ["barrels", "lanterns", "ropes", "sacks", "carts", "bells", "nets", "keys"];
  for (let i = 0; used < tokens; i++) {
    const line = `Ledger ${i}: the ${places[i % 8]} counted ${(i * 37) % 991} ${things[(i * 3) % 8]} on day ${(i % 28) + 1}.`;
    used += estimateTokens(`${line}\n`);
    lines.push(line);
  }
  return `${head}${lines.join("\n")}${tail}`;
}

const OVER_CONTEXT = /exceeds the (available )?context|context length|maximum context/i;

interface Asked {
  prompt: string;
  /** Ollama: num_ctx (the window asked for). */
  window?: number;
  maxTokens: number;
  tools?: unknown[];
  /** An OpenAI-compatible request's own fields (e.g. `cache_prompt`). */
  extra?: Record<string, unknown>;
}

/** One chat request, not streamed; never throws (a failure is a reading with `status` and `error`). */
export async function askServer(s: CanaryServer, a: Asked): Promise<ServerReading> {
  const started = Date.now();
  const fetchImpl = s.fetchImpl ?? fetch;
  const root = s.url.replace(/\/+$/, "");
  const messages = [{ role: "user", content: a.prompt }];
  const ollama = s.provider === "ollama";
  const body = ollama
    ? {
        model: s.model,
        messages,
        stream: false,
        options: {
          temperature: 0,
          num_predict: a.maxTokens,
          ...(a.window ? { num_ctx: a.window } : {}),
        },
        // as keel's runs ask: refuse a prompt over num_ctx rather than cut it
        truncate: false,
        shift: false,
        ...(a.tools ? { tools: a.tools } : {}),
      }
    : {
        model: s.model,
        messages,
        stream: false,
        temperature: 0,
        max_tokens: a.maxTokens,
        ...(a.tools ? { tools: a.tools } : {}),
        ...a.extra,
      };
  let res: Response;
  let text: string;
  try {
    res = await fetchImpl(ollama ? `${root}/api/chat` : `${root}/chat/completions`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(s.apiKey ? { Authorization: `Bearer ${s.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(s.timeoutMs ?? 120_000),
    });
    text = await res.text();
  } catch (e) {
    return { status: 0, error: (e as Error).message, reply: "", ms: Date.now() - started };
  }
  return { ...readAnswer(res.status, text, ollama), ms: Date.now() - started };
}

interface ErrorBody {
  message?: string;
  type?: string;
  n_prompt_tokens?: number;
  n_ctx?: number;
}

/** An answer's body in either dialect (Ollama's native one, or OpenAI's), as far as it is read. */
interface AnswerBody {
  error?: string | ErrorBody;
  message?: { content?: string };
  prompt_eval_count?: number;
  eval_count?: number;
  load_duration?: number;
  done_reason?: string;
  choices?: Array<{ message?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
  };
  timings?: { cache_n?: number };
}

const num = (v: unknown) => (typeof v === "number" ? v : undefined);
/** `{ [key]: value }` where the value is a number, else nothing. */
const some = <K extends string>(key: K, v: unknown) =>
  (typeof v === "number" ? { [key]: v } : {}) as Partial<Record<K, number>>;

/** A refusal or error in the answer's body, with the sizes of an over-context refusal. */
function refusal(status: number, text: string, j: AnswerBody): Omit<ServerReading, "ms"> {
  const e: ErrorBody = typeof j.error === "string" ? { message: j.error } : (j.error ?? {});
  const message = String(e.message ?? text).slice(0, 300);
  const over =
    e.type === "exceed_context_size_error" || OVER_CONTEXT.test(message)
      ? { ...some("prompt", e.n_prompt_tokens), ...some("window", e.n_ctx) }
      : undefined;
  return { status, error: message, reply: "", ...(over ? { overContext: over } : {}) };
}

/** What an answer's body says, in either dialect. */
export function readAnswer(
  status: number,
  text: string,
  ollama: boolean,
): Omit<ServerReading, "ms"> {
  let j: AnswerBody;
  try {
    j = JSON.parse(text) as AnswerBody;
  } catch {
    return { status, error: text.slice(0, 300), reply: "" };
  }
  if (status >= 400 || j.error) return refusal(status, text, j);
  if (ollama)
    return {
      status,
      reply: j.message?.content ?? "",
      ...some("counted", j.prompt_eval_count),
      ...some("generated", j.eval_count),
      ...some("loadNs", j.load_duration),
      ...(j.done_reason ? { finish: j.done_reason } : {}),
    };
  const choice = j.choices?.[0];
  return {
    status,
    reply: choice?.message?.content ?? "",
    ...some("counted", j.usage?.prompt_tokens),
    ...some("cached", num(j.usage?.prompt_tokens_details?.cached_tokens) ?? j.timings?.cache_n),
    ...some("generated", j.usage?.completion_tokens),
    ...(choice?.finish_reason ? { finish: choice.finish_reason } : {}),
  };
}

/** One canary at a window: the marker asked back from a prompt filling `fill` of it. */
export interface CanaryReading extends ServerReading {
  window: number;
  /** keel's estimate of the prompt it sent. */
  estimated: number;
  /** The server counted well under what was sent: it cut the prompt without saying so. */
  truncated: boolean;
  /** The reply repeats the marker: the model read the prompt's start. */
  recalled: boolean;
}

/** A server counting under this share of keel's estimate cut the prompt (estimates are within ~10%). */
const CUT_BELOW = 0.75;

/** Sends the canary: a prompt of `fill` (default 7/8, what keel's fold allows) of `window`. */
export async function canary(
  s: CanaryServer,
  window: number,
  fill = 7 / 8,
  maxTokens = 24,
): Promise<CanaryReading> {
  const marker = canaryMarker();
  const prompt = canaryPrompt(marker, Math.floor(window * fill));
  const estimated = estimateTokens(prompt);
  const r = await askServer(s, { prompt, window, maxTokens });
  return {
    ...r,
    window,
    estimated,
    truncated: r.counted !== undefined && r.counted < estimated * CUT_BELOW,
    recalled: r.reply.includes(marker),
  };
}
