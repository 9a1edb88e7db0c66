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
  type Fitted,
  promptProfile,
  windowFor,
} from "../history/fit.js";
import { cutByContext, roomyReserve } from "../../guard/context-budget.js";
import { weighProfile } from "../../guard/token-estimate.js";
import { toPromptHistory } from "../history/prompt-form.js";
import type { Carried } from "../history/record.js";
import type { ToolMode } from "../../models/capabilities.js";
import { structuredOptions } from "../../models/chat-model.js";
import { ModelServerError } from "../../models/errors.js";
import { callOverWire, type WireFacts, type WireTurn } from "../../models/wire.js";
import { cutAtBudget, cutOf, fittedBudget, type CallKind, type Cut } from "../../models/budget.js";
import { withModelRetry } from "../../models/retry.js";
import type { FormatName } from "../../models/tool-calls/types.js";
import type { toolDefinition } from "../../tools/registry.js";
import type { NodeEnv } from "../runtime.js";
import type { FitState } from "../state.js";
import { TOOLS_IN_PROMPT } from "./tool-prompt.js";
import { serverCounts, withServerCallIds, type ServerCounts } from "../../models/reply-facts.js";
import { countsOf, moved, reusedEstimate, shiftRefused, usageOf } from "./usage.js";

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

/** What the turn's loop carries from one request to the next (see `askTurn`). */
interface Loop {
  mode: ToolMode;
  fallback: TurnAnswer["fallback"];
  scales: number[];
  window: number;
  /** The reply's room: the rule, or the call's budget after the end of the context cut a reply. */
  reserve: number | undefined;
  /** The thought so far of a reply stopped at `thinkCut`: the turn is asked again with it, without thinking. */
  thought: HumanMessage | undefined;
  thoughtText: string;
  refits: number;
}

/** One request as laid out for the window: its system prompt, fixed part and fitted conversation. */
interface Laid {
  native: boolean;
  toolBlock: string | undefined;
  system: string;
  fixed: string;
  key: string;
  fitted: Fitted;
  messages: BaseMessage[];
  /** The call's budget, within what the window leaves after this prompt (budget.ts). */
  sent: number;
}

/** Asks the model for one turn (see the module comment). Throws `ModelServerError` when it cannot. */
export async function askTurn(r: TurnRequest): Promise<TurnAnswer> {
  const { env } = r;
  const sameModel = r.fit?.model === r.modelName;
  const before = scalesOf(sameModel ? r.fit!.scales : r.learned);
  const s: Loop = {
    mode: r.mode,
    fallback: undefined,
    scales: before,
    // The server's real window, where it said so (an over-context refusal): below the run's.
    window: Math.min(r.window, (sameModel && r.fit?.window) || Infinity),
    reserve: undefined,
    thought: undefined,
    thoughtText: "",
    refits: 0,
  };
  const budget = env.settings.generationBudget[r.kind];
  const shifting = r.fit?.unshifted ? undefined : r.cacheReuse;
  for (;;) {
    const laid = layRequest(r, s, shifting, budget);
    let reply: AIMessage;
    let facts: WireFacts;
    try {
      ({ value: reply, facts } = await send(r, s, laid, shifting));
    } catch (err) {
      if (retriesAfter(err, env, s, laid)) continue;
      throw err;
    }
    if (facts.thoughtCut !== undefined && !s.thought) {
      goOnFromThought(r, s, facts.thoughtCut);
      continue;
    }
    withServerCallIds(reply, facts);
    // the thought the reply went on from travels with it, as thinking does (sent back next turns)
    if (s.thought && !reply.additional_kwargs?.reasoning_content)
      reply.additional_kwargs = { ...reply.additional_kwargs, reasoning_content: s.thoughtText };
    const profile = promptProfile(laid.fixed, laid.messages);
    const estimated = weighProfile(profile);
    const expected = Math.round(weighProfile(profile, s.scales));
    const counts = serverCounts(reply, facts);
    const verdict = judgePrompt(profile, counts.prompt, s.window, s.scales);
    s.scales = verdict.scales;
    if (verdict.truncated) {
      // Never answered from a cut prompt: this reply is dropped, the prompt refitted.
      const reported = counts.prompt!;
      env.emit({ type: "truncated", reported, numCtx: s.window, estimated: expected });
      if (s.refits++ < TRUNCATION_REFITS) continue;
      throw truncatedError(env, s, reported, expected);
    }
    const cut = cutAtBudget(reply, facts);
    // Cut at a budget the window lowered, or by the context's end itself: the window, not the
    // call's budget, stopped the reply.
    const atContextEnd =
      cut &&
      (laid.sent < budget || cutByContext(counts.prompt, counts.generated, s.window, budget));
    if (atContextEnd && !s.reserve) {
      // The end of the context, not the budget, stopped this reply: never run, and asked again
      // with the room its budget allows (the fold moves; the record keeps its shape) — when a
      // fold can make that room. A prompt that already leaves it would be sent again as it was
      // and run into the same end (a real llama-server at -c 4096: 61 s, twice).
      const roomy = roomyReserve(s.window, budget);
      if ((counts.prompt ?? expected) > promptBudget(s.window, roomy)) {
        s.reserve = roomy;
        continue;
      }
    }
    const fit = fitAfter(r, s, laid, shifting, counts, estimated);
    if (r.remember && moved(before, s.scales)) await r.remember(s.scales).catch(() => undefined);
    return {
      reply,
      mode: s.mode,
      ...(s.fallback ? { fallback: s.fallback } : {}),
      fit,
      ...usageOf(
        countsOf(counts, facts, expected),
        reusedEstimate(r.fit, laid.key, laid.fixed, laid.fitted) / estimated,
      ),
      ...(cut ? { cut: cutOf(reply, budget, facts, atContextEnd ? s.window : undefined) } : {}),
    };
  }
}

/** Lays out one request: the tools in the channel of `s.mode`, the conversation fitted to the window. */
function layRequest(r: TurnRequest, s: Loop, shifting: number | undefined, budget: number): Laid {
  const native = s.mode === "native" && r.tools.length > 0;
  const toolBlock =
    s.mode === "prompt" && r.tools.length > 0 ? TOOLS_IN_PROMPT(r.tools, r.format) : undefined;
  const system = toolBlock ? `${r.system}\n${toolBlock}` : r.system;
  const fixed = native ? `${system}\n${JSON.stringify(r.tools)}` : system;
  const key = prefixKey(r.modelName, s.mode, fixed);
  const shown = s.mode === "prompt" ? toPromptHistory(r.history) : r.history;
  checkFloor(r.env, fixed, shown, r.pinned(), s.scales, s.window);
  const fitted = fitToWindow(shown, {
    fixed,
    window: s.window,
    pinned: r.pinned,
    foldedUpTo: r.fit?.foldedUpTo ?? 0,
    ...(r.fit?.recordAt !== undefined ? { recordAt: r.fit.recordAt } : {}),
    ...(shifting ? { shift: true } : {}),
    scales: s.scales,
    ...(s.reserve ? { reserve: s.reserve } : {}),
    ...(r.carried ? { carried: r.carried } : {}),
  });
  if (fitted.compacted) r.env.emit({ type: "compacted", ...fitted.compacted });
  const messages = s.thought ? [...fitted.messages, s.thought] : fitted.messages;
  const sent = fittedBudget(
    budget,
    s.window,
    weighProfile(promptProfile(fixed, messages), s.scales),
  );
  return { native, toolBlock, system, fixed, key, fitted, messages, sent };
}

/** Sends the laid-out request over the wire, with the model-call retry policy. */
function send(
  r: TurnRequest,
  s: Loop,
  laid: Laid,
  shifting: number | undefined,
): Promise<{ value: AIMessage; facts: WireFacts }> {
  const { native, toolBlock, system, messages } = laid;
  // A structured request keeps the turn's tools (so its prompt is the turn's prompt) and adds `format`.
  const runnable = native && !r.structured ? r.model.bindTools!(r.tools) : r.model;
  const options = r.structured
    ? {
        ...structuredOptions(r.env.settings.provider, r.structured),
        ...(native ? { tools: r.tools } : {}),
      }
    : {};
  const thinking = messages
    .filter((m) => AIMessage.isInstance(m))
    .map((m) => m.additional_kwargs?.reasoning_content as string | undefined);
  const wire: WireTurn = {
    thinking,
    maxTokens: laid.sent,
    ...(s.thought ? { think: false } : r.thinkCut ? { thinkCut: r.thinkCut } : {}),
    ...(toolBlock ? { instructions: toolBlock } : {}),
    ...(shifting ? { cacheReuse: shifting } : {}),
    ...(r.signal ? { signal: r.signal } : {}),
  };
  return withModelRetry(
    () =>
      callOverWire(wire, () =>
        runnable.invoke([new SystemMessage(system), ...messages], {
          signal: r.signal,
          ...options,
        }),
      ),
    r.env.policy,
  );
}

/**
 * Whether a failed request is asked again, and how (`s` changed for it): a prompt the server
 * refused as too long is refitted, a failed tool channel falls back to the tools in the prompt.
 */
function retriesAfter(err: unknown, env: NodeEnv, s: Loop, laid: Laid): boolean {
  if (!(err instanceof ModelServerError)) return false;
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
  if (refused && s.refits++ < TRUNCATION_REFITS) {
    const profile = promptProfile(laid.fixed, laid.fitted.messages);
    env.emit({
      type: "truncated",
      ...(refused.tokens ? { reported: refused.tokens } : {}),
      numCtx: s.window,
      estimated: Math.round(weighProfile(profile, s.scales)),
      refused: true,
    });
    s.scales = judgeRefusal(profile, refused.tokens, s.window, s.scales);
    return true;
  }
  if (laid.native && (kind === "tool_parse" || kind === "no_tools" || kind === "schema")) {
    s.fallback = { kind, reason: err.detail };
    env.emit({ type: "tool-channel", reason: s.fallback.reason, pinned: kind !== "tool_parse" });
    s.mode = "prompt";
    return true;
  }
  // A prompt over the server's context, with its count and its n_ctx: refit to those.
  if (kind === "truncated" && over && s.refits++ < TRUNCATION_REFITS) {
    const profile = promptProfile(laid.fixed, laid.fitted.messages);
    env.emit({
      type: "truncated",
      reported: over.prompt,
      numCtx: over.window,
      estimated: Math.round(weighProfile(profile, s.scales)),
      refused: true,
    });
    s.scales = judgeRefusal(profile, over.prompt, over.window, s.scales);
    s.window = Math.min(s.window, over.window);
    return true;
  }
  return false;
}

/** A reply stopped while thinking at `thinkCut`: the turn is asked again with the thought so far. */
function goOnFromThought(r: TurnRequest, s: Loop, thoughtCut: string): void {
  const tokens = r.thinkCut ?? 0;
  r.env.emit({ type: "thought-cut", tokens });
  s.thoughtText = thoughtCut;
  s.thought = new HumanMessage({ content: THOUGHT_NOTE(tokens, s.thoughtText), name: "keel" });
}

/** The error that ends a turn whose prompt the server still cut after the refits. */
function truncatedError(
  env: NodeEnv,
  s: Loop,
  reported: number,
  expected: number,
): ModelServerError {
  return new ModelServerError(
    "truncated",
    env.settings.serverUrl,
    env.settings.model,
    `it counted ${reported} prompt tokens under num_ctx ${s.window} for a prompt keel estimated at ${expected} tokens, after ${TRUNCATION_REFITS} refits`,
    s.refits,
    { provider: env.settings.provider },
  );
}

/** The thread's fit state after an answered request (an unshifted fold is noted and emitted). */
function fitAfter(
  r: TurnRequest,
  s: Loop,
  laid: Laid,
  shifting: number | undefined,
  counts: ServerCounts,
  estimated: number,
): FitState {
  const { fitted } = laid;
  const refused =
    shifting !== undefined && fitted.compacted !== undefined && counts.cached !== undefined
      ? shiftRefused(laid.fixed, fitted.messages, counts.cached, s.scales)
      : undefined;
  if (refused) r.env.emit({ type: "unshifted", cached: counts.cached!, kept: refused.kept });
  const unshifted = r.fit?.unshifted || refused !== undefined;
  return {
    foldedUpTo: fitted.foldedUpTo,
    ...(fitted.recordAt !== undefined ? { recordAt: fitted.recordAt } : {}),
    ...(unshifted ? { unshifted: true } : {}),
    scale: counts.prompt ? counts.prompt / estimated : (r.fit?.scale ?? 1),
    scales: s.scales,
    model: r.modelName,
    prefix: laid.key,
    ...(s.window < r.window ? { window: s.window } : {}),
  };
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
