/**
 * One model request of a turn, as real servers need it: the history fitted to the window with a
 * stable prefix (history/fit.ts), the answer checked against the server's own count of the prompt
 * (a cut prompt is refitted and asked again, never taken), and a failure of the server's own
 * tool-call parser re-asked with the tools in the prompt (the identical request would fail
 * identically: servers.md, ollama issues 18563, 11704).
 */
import { createHash } from "node:crypto";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { judgePrompt, judgeRefusal, refusedPrompt, scalesOf } from "../history/calibrate.js";
import { estimatePrompt, fitToWindow, promptProfile } from "../history/fit.js";
import { weighProfile } from "../../guard/token-estimate.js";
import { toPromptHistory } from "../history/prompt-form.js";
import { RECORD_HEADER } from "../history/record.js";
import type { ToolMode } from "../../models/capabilities.js";
import { structuredOptions } from "../../models/chat-model.js";
import { ModelServerError } from "../../models/errors.js";
import { withWireTurn } from "../../models/wire.js";
import { withModelRetry } from "../../models/retry.js";
import type { FormatName } from "../../models/tool-calls/types.js";
import type { toolDefinition } from "../../tools/registry.js";
import type { NodeEnv } from "../runtime.js";
import type { FitState, TurnUsage } from "../state.js";
import { TOOLS_IN_PROMPT } from "../nodes/act/tool-prompt.js";

/** Refits after a cut prompt before the run stops with an error naming the truncation. */
const TRUNCATION_REFITS = 2;

export interface TurnRequest {
  env: NodeEnv;
  model: BaseChatModel;
  /** The system prompt without tools. */
  system: string;
  /** The tools offered this turn (none for the tool-less summary turn). */
  tools: Array<ReturnType<typeof toolDefinition>>;
  mode: ToolMode;
  format: FormatName;
  /** The conversation as stored (native messages). */
  history: BaseMessage[];
  /** num_ctx of the run. */
  window: number;
  /** The thread's fit state (fold point, calibration), if any. */
  fit: FitState | undefined;
  /** The model's calibration as remembered in the store, for a thread without one of its own. */
  learned?: readonly number[];
  /** Remembers a changed calibration for the model (in the store); failures are the caller's to swallow. */
  remember?: (scales: number[]) => Promise<void>;
  /** Indices of the messages never folded (see `fitToWindow`). */
  pinned: () => number[];
  signal?: AbortSignal;
  /** A JSON schema: the reply must be JSON of this shape (Ollama's `format`), with the same tools offered. */
  structured?: Record<string, unknown>;
}

export interface TurnAnswer {
  reply: AIMessage;
  /** The channel the answer came through. */
  mode: ToolMode;
  /** Why this turn left native mode (the server's tool channel failed). */
  fallback?: { reason: string; kind: "tool_parse" | "no_tools" };
  /** The fit state after this turn. */
  fit: FitState;
  usage?: TurnUsage;
}

/** Identifies what sits before the conversation: a change there invalidates the server's cache. */
const prefixKey = (model: string, mode: ToolMode, fixed: string) =>
  createHash("sha1").update(`${model}\n${mode}\n${fixed}`).digest("base64url").slice(0, 16);

/** Asks the model for one turn (see the module comment). Throws `ModelServerError` when it cannot. */
export async function askTurn(r: TurnRequest): Promise<TurnAnswer> {
  const { env } = r;
  let mode = r.mode;
  let fallback: TurnAnswer["fallback"];
  const sameModel = r.fit?.model === env.settings.model;
  const before = scalesOf(sameModel ? r.fit!.scales : r.learned);
  let scales = before;
  for (let refits = 0; ;) {
    const native = mode === "native" && r.tools.length > 0;
    const system =
      mode === "prompt" && r.tools.length > 0
        ? `${r.system}\n${TOOLS_IN_PROMPT(r.tools, r.format)}`
        : r.system;
    const fixed = native ? `${system}\n${JSON.stringify(r.tools)}` : system;
    const key = prefixKey(env.settings.model, mode, fixed);
    const shown = mode === "prompt" ? toPromptHistory(r.history) : r.history;
    const fitted = fitToWindow(shown, {
      fixed,
      window: r.window,
      pinned: r.pinned,
      foldedUpTo: r.fit?.foldedUpTo ?? 0,
      scales,
    });
    if (fitted.compacted) env.emit({ type: "compacted", ...fitted.compacted });
    // A structured request keeps the turn's tools (so its prompt is the turn's prompt) and adds `format`.
    const runnable = native && !r.structured ? r.model.bindTools!(r.tools) : r.model;
    const options = r.structured
      ? {
          ...structuredOptions(env.settings.provider, r.structured),
          ...(native ? { tools: r.tools } : {}),
        }
      : {};
    const thinking = fitted.messages
      .filter((m) => AIMessage.isInstance(m))
      .map((m) => m.additional_kwargs?.reasoning_content as string | undefined);
    let reply: AIMessage;
    try {
      reply = await withModelRetry(
        () =>
          withWireTurn({ thinking }, () =>
            runnable.invoke([new SystemMessage(system), ...fitted.messages], {
              signal: r.signal,
              ...options,
            }),
          ),
        env.policy,
      );
    } catch (err) {
      const kind = err instanceof ModelServerError ? err.kind : undefined;
      // A server that refuses an over-long prompt (llama.cpp, vLLM) says so: refit and ask again.
      const refused =
        err instanceof ModelServerError && kind === "bad_request"
          ? refusedPrompt(err.detail)
          : undefined;
      if (refused && refits++ < TRUNCATION_REFITS) {
        const profile = promptProfile(fixed, fitted.messages);
        env.emit({
          type: "truncated",
          reported: refused.tokens ?? r.window + 1,
          numCtx: r.window,
          estimated: Math.round(weighProfile(profile, scales)),
        });
        scales = judgeRefusal(profile, refused.tokens, r.window, scales);
        continue;
      }
      if (native && (kind === "tool_parse" || kind === "no_tools")) {
        fallback = { kind, reason: (err as ModelServerError).detail };
        env.emit({ type: "tool-channel", reason: fallback.reason, pinned: kind === "no_tools" });
        mode = "prompt";
        continue;
      }
      throw err;
    }
    const profile = promptProfile(fixed, fitted.messages);
    const estimated = weighProfile(profile);
    const expected = Math.round(weighProfile(profile, scales));
    const counts = serverCounts(reply);
    const verdict = judgePrompt(profile, counts.prompt, r.window, scales);
    scales = verdict.scales;
    if (verdict.truncated) {
      // Never answered from a cut prompt: this reply is dropped, the prompt refitted.
      const reported = counts.prompt!;
      env.emit({ type: "truncated", reported, numCtx: r.window, estimated: expected });
      if (refits++ < TRUNCATION_REFITS) continue;
      throw new ModelServerError(
        "truncated",
        env.settings.serverUrl,
        env.settings.model,
        `it counted ${reported} prompt tokens under num_ctx ${r.window} for a prompt keel estimated at ${expected} tokens, after ${TRUNCATION_REFITS} refits`,
        refits,
        { provider: env.settings.provider },
      );
    }
    const fit: FitState = {
      foldedUpTo: fitted.foldedUpTo,
      scale: counts.prompt ? counts.prompt / estimated : (r.fit?.scale ?? 1),
      scales,
      model: env.settings.model,
      prefix: key,
    };
    if (r.remember && moved(before, scales)) await r.remember(scales).catch(() => undefined);
    return {
      reply,
      mode,
      ...(fallback ? { fallback } : {}),
      fit,
      ...usageOf(counts, reusedEstimate(r.fit, key, fixed, fitted) / estimated),
    };
  }
}

/**
 * keel's estimate of the prompt tokens the server could take from its cache: everything up to the
 * previous turn's reply when nothing before the tail changed; after a fold, the prompt before the
 * record; nothing when the system prompt, the tools or the model changed.
 */
function reusedEstimate(
  before: FitState | undefined,
  key: string,
  fixed: string,
  fitted: ReturnType<typeof fitToWindow>,
): number {
  if (!before || before.prefix !== key) return 0;
  const ms = fitted.messages;
  if (fitted.compacted) {
    const record = ms.findIndex(
      (m) => typeof m.content === "string" && m.content.startsWith(RECORD_HEADER),
    );
    return estimatePrompt(fixed, ms.slice(0, Math.max(0, record)));
  }
  let last = ms.length - 1;
  while (last >= 0 && !AIMessage.isInstance(ms[last])) last--;
  return last < 0 ? estimatePrompt(fixed, []) : estimatePrompt(fixed, ms.slice(0, last + 1));
}

/** What the server counted for one answer, whichever API it speaks. */
interface ServerCounts {
  prompt?: number;
  generated?: number;
  /** Nanoseconds of generation (Ollama only). */
  evalNs?: number;
}

/**
 * The server's counts: Ollama's `prompt_eval_count`/`eval_count`/`eval_duration`, or the standard
 * usage (an OpenAI-compatible server's `usage.prompt_tokens`, when it sent usage).
 */
function serverCounts(reply: AIMessage): ServerCounts {
  const meta = reply.response_metadata as Record<string, number | undefined>;
  const usage = reply.usage_metadata;
  const prompt = meta.prompt_eval_count ?? (usage?.input_tokens || undefined);
  const generated = meta.eval_count ?? (usage?.output_tokens || undefined);
  return {
    ...(prompt !== undefined ? { prompt } : {}),
    ...(generated !== undefined ? { generated } : {}),
    ...(meta.eval_duration !== undefined ? { evalNs: meta.eval_duration } : {}),
  };
}

/**
 * Per-turn figures from the server's counts; the reused share is keel's estimate, since servers
 * do not report cache hits.
 */
function usageOf(counts: ServerCounts, reusedShare: number): { usage?: TurnUsage } {
  const { prompt, generated, evalNs } = counts;
  if (!prompt && !generated) return {};
  const promptTokens = prompt ?? 0;
  const reusedTokens = Math.round(promptTokens * Math.min(1, reusedShare));
  return {
    usage: {
      promptTokens,
      reusedTokens,
      newTokens: promptTokens - reusedTokens,
      generatedTokens: generated ?? 0,
      ...(generated && evalNs
        ? { tokensPerSecond: Math.round((generated / (evalNs / 1e9)) * 10) / 10 }
        : {}),
    },
  };
}

/** The fit state to write after a request: only when it changed (every write is a row in the checkpointer). */
export function fitUpdate(
  before: FitState | undefined,
  after: FitState | undefined,
): { fit?: FitState } {
  if (!after) return {};
  const same =
    before &&
    before.foldedUpTo === after.foldedUpTo &&
    before.model === after.model &&
    before.prefix === after.prefix &&
    !moved(scalesOf(before.scales), scalesOf(after.scales));
  return same ? {} : { fit: after };
}

/** Whether a calibration changed enough to be worth a write (3% in any class). */
function moved(before: readonly number[], after: readonly number[]): boolean {
  return after.some((x, k) => Math.abs(x - before[k]!) > 0.03 * before[k]!);
}
