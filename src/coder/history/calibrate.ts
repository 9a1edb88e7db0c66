/**
 * Reading the server's own count of the prompt, pure. Ollama reports `prompt_eval_count`: the
 * tokens of the prompt the model saw, cached or not (ollama PR 16428 keeps that meaning); an
 * OpenAI-compatible server reports `usage.prompt_tokens`. A prompt over the window is cut at the
 * front and still answered with 200: Ollama's runner keeps `num_ctx/2 + 2` tokens (docs/servers.md,
 * ollama issues 3839 and 17427), so the count comes back at that keep size, or at the window on
 * servers that keep all they can. llama.cpp and vLLM refuse such a prompt instead, naming its size.
 *
 * From honest counts keel learns, per script class of its estimate (guard/token-estimate.ts), how
 * many server tokens an estimated token is worth for this model: the estimate is conservative,
 * and a tokenizer denser or sparser for CJK, code or blobs than it assumes is learned class by
 * class (normalised least mean squares over the prompt's profile).
 *
 * What is learned is remembered in the run's LangGraph store, under ["keel", "calibration"] keyed
 * by the model's name: a new thread with a model keel has seen starts from what its server counted
 * before, instead of the conservative prices. Stored by class name, so a changed class list keeps
 * what still applies. A store that cannot be read or written is no failure of the run.
 */
import type { BaseStore } from "@langchain/langgraph";
import { COUNTED, TOKEN_CLASSES, weighProfile } from "../../guard/token-estimate.js";

export interface PromptVerdict {
  /** The server cut the prompt: its answer was made without the prompt's start. */
  truncated: boolean;
  /** The per-class calibration to use from now on (indexed as `TOKEN_CLASSES`). */
  scales: number[];
}

const MIN_SCALE = 0.3;
const MAX_SCALE = 4;
const clamp = (x: number) => Math.min(MAX_SCALE, Math.max(MIN_SCALE, x));

/** No calibration yet: every class at its conservative price. */
export const unitScales = (): number[] => TOKEN_CLASSES.map(() => 1);

/**
 * `scales` as a full, valid calibration (a stored or older one may be short or absent); the
 * server's own counts (`counted`) always weigh 1.
 */
export function scalesOf(scales: readonly number[] | undefined): number[] {
  return TOKEN_CLASSES.map((_, k) => {
    if (k === COUNTED) return 1;
    const s = scales?.[k];
    return typeof s === "number" && Number.isFinite(s) ? clamp(s) : 1;
  });
}

/** Ollama's keep size for an over-long prompt under `numCtx`. */
export const ollamaKeep = (numCtx: number) => Math.floor(numCtx / 2) + 2;

/**
 * Judges one reply's `reported` prompt count against keel's estimate of the prompt (`profile`,
 * uncalibrated tokens per class) under `numCtx`, and updates `scales`. A count at the window, or at
 * Ollama's keep size for a prompt expected well above it, is a cut prompt: every class is then made
 * at least pessimistic enough for the prompt to have been over the window, and a quarter more.
 * Otherwise the calibration moves towards the count: all the way when keel under-estimated, half
 * way when it over-estimated (staying on the safe side). Without a count nothing changes.
 */
export function judgePrompt(
  profile: readonly number[],
  reported: number | undefined,
  numCtx: number,
  scales: readonly number[],
): PromptVerdict {
  const s = scalesOf(scales);
  const expected = weighProfile(profile, s);
  if (!reported || reported <= 0 || expected <= 0) return { truncated: false, scales: s };
  const truncated =
    reported >= numCtx - 8 ||
    (Math.abs(reported - ollamaKeep(numCtx)) <= 16 && reported < 0.7 * expected);
  if (truncated) {
    const f = Math.max(1.25, (numCtx / expected) * 1.1);
    return { truncated, scales: scalesOf(s.map((x, k) => (profile[k]! > 0 ? clamp(x * f) : x))) };
  }
  // Short prompts say little (template overhead dominates).
  if (expected < 200) return { truncated, scales: s };
  const error = reported - expected;
  const rate = error > 0 ? 1 : 0.5;
  // The server's own counts are exact: only the estimated classes learn.
  const learnt = profile.map((p, k) => (k === COUNTED ? 0 : p));
  const norm = learnt.reduce((a, p) => a + p * p, 0);
  if (norm === 0) return { truncated, scales: s };
  // Normalised LMS: the smallest change of the scales that moves the estimate by rate × error,
  // spread over the classes by their share of the prompt.
  return {
    truncated,
    scales: scalesOf(s.map((x, k) => clamp(x + (rate * error * learnt[k]!) / norm))),
  };
}

/**
 * A server's refusal of an over-long prompt (llama.cpp: "request (3053 tokens) exceeds the
 * available context size"; vLLM: "maximum context length is … you requested 3053 tokens"), with
 * the prompt's size when the text names it; undefined when the text is no such refusal.
 */
export function refusedPrompt(message: string): { tokens?: number } | undefined {
  if (!/exceeds? the available context size|maximum context length/i.test(message))
    return undefined;
  const n = /\((\d+) tokens\)|requested (\d+) tokens|n_prompt_tokens"?\s*:\s*(\d+)/.exec(message);
  const v = n ? Number(n[1] ?? n[2] ?? n[3]) : NaN;
  return Number.isFinite(v) && v > 0 ? { tokens: v } : {};
}

/**
 * The calibration after a server refused the prompt as too long: the prompt held at least
 * `counted` tokens (the server's figure) or more than `numCtx` (when it named none), so every class
 * present is scaled up to that, and a quarter more.
 */
export function judgeRefusal(
  profile: readonly number[],
  counted: number | undefined,
  numCtx: number,
  scales: readonly number[],
): number[] {
  const s = scalesOf(scales);
  const expected = Math.max(1, weighProfile(profile, s));
  const f = Math.max(1.25, (Math.max(counted ?? 0, numCtx + 1) / expected) * 1.1);
  return scalesOf(s.map((x, k) => (profile[k]! > 0 ? clamp(x * f) : x)));
}

const NS = ["keel", "calibration"];

interface Stored {
  model: string;
  /** Server tokens per keel-estimated token, by class name. */
  scales: Record<string, number>;
  at: string;
}

/** The model's remembered calibration (indexed as `TOKEN_CLASSES`), or undefined when none. */
export async function learnedScales(
  store: BaseStore | undefined,
  model: string,
): Promise<number[] | undefined> {
  if (!store) return undefined;
  try {
    const item = await store.get(NS, model);
    const v = item?.value as Stored | undefined;
    if (!v?.scales) return undefined;
    return scalesOf(TOKEN_CLASSES.map((c) => v.scales[c] ?? 1));
  } catch {
    return undefined;
  }
}

/** Remembers `scales` (indexed as `TOKEN_CLASSES`) for `model`. */
export async function rememberScales(
  store: BaseStore | undefined,
  model: string,
  scales: readonly number[],
): Promise<void> {
  if (!store) return;
  const value: Stored = {
    model,
    scales: Object.fromEntries(TOKEN_CLASSES.map((c, k) => [c, scales[k] ?? 1])),
    at: new Date().toISOString(),
  };
  await store.put(NS, model, value as unknown as Record<string, unknown>).catch(() => undefined);
}
