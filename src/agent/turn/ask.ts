/**
 * One model request of a turn, as real servers need it: the history fitted to the window with a
 * stable prefix (history/fit.ts), the answer checked against the server's own count of the prompt
 * (a cut prompt is refitted and asked again, never taken), and a failure of the server's own
 * tool-call parser re-asked with the tools in the prompt (the identical request would fail
 * identically: docs/servers.md, ollama issues 18563, 11704).
 */
import type { TurnUsage } from "../turn-sums.js";
import { createHash } from "node:crypto";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { judgePrompt, judgeRefusal, refusedPrompt, scalesOf } from "../history/calibrate.js";
import {
  estimatePrompt,
  fitToWindow,
  promptBudget,
  promptProfile,
  windowFor,
} from "../history/fit.js";
import { cutByContext, roomyReserve } from "../../guard/context-budget.js";
import { weighProfile } from "../../guard/token-estimate.js";
import { toPromptHistory } from "../history/prompt-form.js";
import { recordIndex, type Carried } from "../history/record.js";
import type { ToolMode } from "../../models/capabilities.js";
import { structuredOptions } from "../../models/chat-model.js";
import { ModelServerError } from "../../models/errors.js";
import { callOverWire, type WireFacts, type WireTurn } from "../../models/wire.js";
import { withServerCallIds } from "../../models/server-calls.js";
import { cutAtBudget, cutOf, fittedBudget, type CallKind, type Cut } from "../../models/budget.js";
import { withModelRetry } from "../../models/retry.js";
import type { FormatName } from "../../models/tool-calls/types.js";
import type { toolDefinition } from "../../tools/registry.js";
import type { NodeEnv } from "../runtime.js";
import type { FitState } from "../state.js";
import { TOOLS_IN_PROMPT } from "./tool-prompt.js";
import { serverCounts } from "../../models/server-counts.js";
import { countsOf, reusedEstimate, usageOf } from "./usage.js";

/** Refits after a cut prompt before the run stops with an error naming the truncation. */
const TRUNCATION_REFITS = 2;

/**
 * The request's last message when the reply was still thinking at `thinkCut`: the thought so far,
 * and to act on it now (sent once, for that turn; the conversation does not keep it).
 */
const THOUGHT_NOTE = (tokens: number, thought: string) =>
  `[keel] Your thinking was stopped after ${tokens} tokens. What you had thought so far:\n<thought>\n${thought.trim()}\n</thought>\nGo on from it without thinking again: make the next tool call now, or give your answer.`;

export interface TurnRequest {
  env: NodeEnv;
  /** Which call this is: its generation budget (settings `generationBudget`). */
  kind: Extract<CallKind, "plan" | "act" | "summary">;
  model: BaseChatModel;
  /** The model as the server names it (`modelFitOf`): the key of its calibration and of the turn's record. */
  modelName: string;
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
  /** The record's account of messages moved out of the conversation (history/archive.ts). */
  carried?: Carried;
  signal?: AbortSignal;
  /**
   * The `n_cache_reuse` to send, to a server that shifts runs of its cache into place: folds keep
   * more (fit.ts `shift`), until the server shows it does not shift for this model (`unshifted`).
   */
  cacheReuse?: number;
  /** A JSON schema: the reply must be JSON of this shape (Ollama's `format`), with the same tools offered. */
  structured?: Record<string, unknown>;
  /** Stop the reply's thinking after this many tokens and go on from the thought (settings `thinkCut`). */
  thinkCut?: number;
}

export interface TurnAnswer {
  reply: AIMessage;
  /** The channel the answer came through. */
  mode: ToolMode;
  /** Why this turn left native mode (the server's tool channel failed). */
  fallback?: { reason: string; kind: "tool_parse" | "no_tools" | "schema" };
  /** The fit state after this turn. */
  fit: FitState;
  usage?: TurnUsage;
  /**
   * The server stopped the reply at its generation budget, or keel stopped it in a loop (`looped`:
   * the unit it repeated): any call in it is cut (budget.ts).
   */
  cut?: Cut;
}

/** Identifies what sits before the conversation: a change there invalidates the server's cache. */
const prefixKey = (model: string, mode: ToolMode, fixed: string) =>
  createHash("sha1").update(`${model}\n${mode}\n${fixed}`).digest("base64url").slice(0, 16);

/** Asks the model for one turn (see the module comment). Throws `ModelServerError` when it cannot. */
export async function askTurn(r: TurnRequest): Promise<TurnAnswer> {
  const { env } = r;
  let mode = r.mode;
  let fallback: TurnAnswer["fallback"];
  const sameModel = r.fit?.model === r.modelName;
  const before = scalesOf(sameModel ? r.fit!.scales : r.learned);
  let scales = before;
  // The server's real window, where it said so (an over-context refusal): below the run's.
  let window = Math.min(r.window, (sameModel && r.fit?.window) || Infinity);
  const budget = env.settings.generationBudget[r.kind];
  const shifting = r.fit?.unshifted ? undefined : r.cacheReuse;
  // The reply's room: the rule, or the call's budget after the end of the context cut a reply.
  let reserve: number | undefined;
  // The thought so far of a reply stopped at `thinkCut`: the turn is asked again with it, without thinking.
  let thought: HumanMessage | undefined;
  let thoughtText = "";
  for (let refits = 0; ;) {
    const native = mode === "native" && r.tools.length > 0;
    const toolBlock =
      mode === "prompt" && r.tools.length > 0 ? TOOLS_IN_PROMPT(r.tools, r.format) : undefined;
    const system = toolBlock ? `${r.system}\n${toolBlock}` : r.system;
    const fixed = native ? `${system}\n${JSON.stringify(r.tools)}` : system;
    const key = prefixKey(r.modelName, mode, fixed);
    const shown = mode === "prompt" ? toPromptHistory(r.history) : r.history;
    checkFloor(env, fixed, shown, r.pinned(), scales, window);
    const fitted = fitToWindow(shown, {
      fixed,
      window,
      pinned: r.pinned,
      foldedUpTo: r.fit?.foldedUpTo ?? 0,
      ...(r.fit?.recordAt !== undefined ? { recordAt: r.fit.recordAt } : {}),
      ...(shifting ? { shift: true } : {}),
      scales,
      ...(reserve ? { reserve } : {}),
      ...(r.carried ? { carried: r.carried } : {}),
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
    const messages = thought ? [...fitted.messages, thought] : fitted.messages;
    const thinking = messages
      .filter((m) => AIMessage.isInstance(m))
      .map((m) => m.additional_kwargs?.reasoning_content as string | undefined);
    // The call's budget, within what the window leaves after this prompt (budget.ts).
    const sent = fittedBudget(budget, window, weighProfile(promptProfile(fixed, messages), scales));
    const wire: WireTurn = {
      thinking,
      maxTokens: sent,
      ...(thought ? { think: false } : r.thinkCut ? { thinkCut: r.thinkCut } : {}),
      ...(toolBlock ? { instructions: toolBlock } : {}),
      ...(shifting ? { cacheReuse: shifting } : {}),
      ...(r.signal ? { signal: r.signal } : {}),
    };
    let reply: AIMessage;
    let facts: WireFacts;
    try {
      ({ value: reply, facts } = await withModelRetry(
        () =>
          callOverWire(wire, () =>
            runnable.invoke([new SystemMessage(system), ...messages], {
              signal: r.signal,
              ...options,
            }),
          ),
        env.policy,
      ));
    } catch (err) {
      if (!(err instanceof ModelServerError)) throw err;
      const kind = err.kind;
      const over = err.origin.context;
      // A server that refuses an over-long prompt in words keel's error mapping did not read
      // (vLLM's "maximum context length"), or without its count (Ollama asked not to truncate):
      // refit and ask again.
      const refused =
        kind === "bad_request"
          ? refusedPrompt(err.detail)
          : kind === "truncated" && !over
            ? {}
            : undefined;
      if (refused && refits++ < TRUNCATION_REFITS) {
        const profile = promptProfile(fixed, fitted.messages);
        env.emit({
          type: "truncated",
          ...(refused.tokens ? { reported: refused.tokens } : {}),
          numCtx: window,
          estimated: Math.round(weighProfile(profile, scales)),
          refused: true,
        });
        scales = judgeRefusal(profile, refused.tokens, window, scales);
        continue;
      }
      if (native && (kind === "tool_parse" || kind === "no_tools" || kind === "schema")) {
        fallback = { kind, reason: err.detail };
        env.emit({ type: "tool-channel", reason: fallback.reason, pinned: kind !== "tool_parse" });
        mode = "prompt";
        continue;
      }
      // A prompt over the server's context, with its count and its n_ctx: refit to those.
      if (kind === "truncated" && over && refits++ < TRUNCATION_REFITS) {
        const profile = promptProfile(fixed, fitted.messages);
        env.emit({
          type: "truncated",
          reported: over.prompt,
          numCtx: over.window,
          estimated: Math.round(weighProfile(profile, scales)),
          refused: true,
        });
        scales = judgeRefusal(profile, over.prompt, over.window, scales);
        window = Math.min(window, over.window);
        continue;
      }
      throw err;
    }
    if (facts.thoughtCut !== undefined && !thought) {
      const tokens = r.thinkCut ?? 0;
      env.emit({ type: "thought-cut", tokens });
      thoughtText = facts.thoughtCut;
      thought = new HumanMessage({ content: THOUGHT_NOTE(tokens, thoughtText), name: "keel" });
      continue;
    }
    withServerCallIds(reply, facts);
    // the thought the reply went on from travels with it, as thinking does (sent back next turns)
    if (thought && !reply.additional_kwargs?.reasoning_content)
      reply.additional_kwargs = { ...reply.additional_kwargs, reasoning_content: thoughtText };
    const profile = promptProfile(fixed, messages);
    const estimated = weighProfile(profile);
    const expected = Math.round(weighProfile(profile, scales));
    const counts = serverCounts(reply, facts);
    const verdict = judgePrompt(profile, counts.prompt, window, scales);
    scales = verdict.scales;
    if (verdict.truncated) {
      // Never answered from a cut prompt: this reply is dropped, the prompt refitted.
      const reported = counts.prompt!;
      env.emit({ type: "truncated", reported, numCtx: window, estimated: expected });
      if (refits++ < TRUNCATION_REFITS) continue;
      throw new ModelServerError(
        "truncated",
        env.settings.serverUrl,
        env.settings.model,
        `it counted ${reported} prompt tokens under num_ctx ${window} for a prompt keel estimated at ${expected} tokens, after ${TRUNCATION_REFITS} refits`,
        refits,
        { provider: env.settings.provider },
      );
    }
    const cut = cutAtBudget(reply, facts);
    // Cut at a budget the window lowered, or by the context's end itself: the window, not the
    // call's budget, stopped the reply.
    const atContextEnd =
      cut && (sent < budget || cutByContext(counts.prompt, counts.generated, window, budget));
    if (atContextEnd && !reserve) {
      // The end of the context, not the budget, stopped this reply: never run, and asked again
      // with the room its budget allows (the fold moves; the record keeps its shape) — when a
      // fold can make that room. A prompt that already leaves it would be sent again as it was
      // and run into the same end (a real llama-server at -c 4096: 61 s, twice).
      const roomy = roomyReserve(window, budget);
      if ((counts.prompt ?? expected) > promptBudget(window, roomy)) {
        reserve = roomy;
        continue;
      }
    }
    const refused =
      shifting !== undefined && fitted.compacted !== undefined && counts.cached !== undefined
        ? shiftRefused(fixed, fitted.messages, counts.cached, scales)
        : undefined;
    if (refused) env.emit({ type: "unshifted", cached: counts.cached!, kept: refused.kept });
    const unshifted = r.fit?.unshifted || refused !== undefined;
    const fit: FitState = {
      foldedUpTo: fitted.foldedUpTo,
      ...(fitted.recordAt !== undefined ? { recordAt: fitted.recordAt } : {}),
      ...(unshifted ? { unshifted: true } : {}),
      scale: counts.prompt ? counts.prompt / estimated : (r.fit?.scale ?? 1),
      scales,
      model: r.modelName,
      prefix: key,
      ...(window < r.window ? { window } : {}),
    };
    if (r.remember && moved(before, scales)) await r.remember(scales).catch(() => undefined);
    return {
      reply,
      mode,
      ...(fallback ? { fallback } : {}),
      fit,
      ...usageOf(
        countsOf(counts, facts, expected),
        reusedEstimate(r.fit, key, fixed, fitted) / estimated,
      ),
      ...(cut ? { cut: cutOf(reply, budget, facts, atContextEnd ? window : undefined) } : {}),
    };
  }
}

/**
 * A fold laid out for a server that shifts its cache, answered without a shift: the server served
 * under half of what sat before the record (`kept`: the kept turns, still in its cache further on).
 * llama-server ignores `n_cache_reuse` for a model it cannot shift (sliding-window attention without
 * `--swa-full`, recurrent models) and says so only in its log; the thread then folds plainly.
 */
function shiftRefused(
  fixed: string,
  messages: BaseMessage[],
  cached: number,
  scales: readonly number[],
): { kept: number } | undefined {
  const at = recordIndex(messages);
  if (at < 0) return undefined;
  const kept = Math.round(weighProfile(promptProfile(fixed, messages.slice(0, at)), scales));
  return cached < kept / 2 ? { kept } : undefined;
}

/**
 * Stops, with the truth, a run whose server cannot hold keel's own prompt: the fixed part (system
 * prompt, tools) and the pinned messages (the request, the plan) — nothing a fold can shrink — over
 * the window's room for a prompt. Lowering keel's window cannot help; the server needs a larger one.
 */
function checkFloor(
  env: NodeEnv,
  fixed: string,
  shown: BaseMessage[],
  pinned: number[],
  scales: readonly number[],
  window: number,
): void {
  const floor = Math.round(
    estimatePrompt(
      fixed,
      pinned.filter((i) => i < shown.length).map((i) => shown[i]!),
      scales,
    ),
  );
  if (floor <= promptBudget(window)) return;
  const openai = env.settings.provider === "openai";
  const need = windowFor(floor);
  const needs = need
    ? `; it needs a context of at least ${need} tokens (a shorter request needs less)`
    : "";
  throw new ModelServerError(
    "context_small",
    env.settings.serverUrl,
    env.settings.model,
    `the ${openai ? "server's context (n_ctx of a slot)" : "window (num_ctx)"} is ${window} tokens, smaller than keel's minimum prompt of ${floor} tokens (its system prompt, tool definitions and the request) and room for a reply (${window - promptBudget(window)} tokens)${needs}`,
    1,
    { provider: env.settings.provider, ...(need ? { need } : {}) },
  );
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
    before.recordAt === after.recordAt &&
    before.unshifted === after.unshifted &&
    before.model === after.model &&
    before.prefix === after.prefix &&
    before.window === after.window &&
    !moved(scalesOf(before.scales), scalesOf(after.scales));
  return same ? {} : { fit: after };
}

/** Whether a calibration changed enough to be worth a write (3% in any class). */
function moved(before: readonly number[], after: readonly number[]): boolean {
  return after.some((x, k) => Math.abs(x - before[k]!) > 0.03 * before[k]!);
}
