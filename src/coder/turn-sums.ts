/**
 * A run's model turns summed, pure: the tokens, speed and salvaged calls `keel stats` and the run's
 * outcome report, over the turns still in the conversation and those moved out of it
 * (history/archive.ts keeps their sums in state).
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";

/** One model turn's tokens as the server reported them; kept on the AI message (`keel_usage`). */
export interface TurnUsage {
  /** The prompt's tokens (Ollama's prompt_eval_count). */
  promptTokens: number;
  /** Those the server took from its cache: its own count, or keel's estimate (`reusedFrom`). */
  reusedTokens: number;
  /** server: the server reported its cache hits (cached_tokens, timings.cache_n); estimate: keel's. */
  reusedFrom?: "server" | "estimate";
  newTokens: number;
  generatedTokens: number;
  /** Generation speed (eval_count / eval_duration). */
  tokensPerSecond?: number;
  /**
   * keel: the server counted nothing, for keel stopped the reply mid-stream (a loop): the prompt is
   * keel's estimate and the generated tokens the pieces it streamed.
   */
  countedBy?: "keel";
}

export interface TurnSums {
  /** Model turns (AI messages). */
  turns: number;
  promptTokens: number;
  newTokens: number;
  generatedTokens: number;
  /** Generation speeds reported, summed, and how many turns reported one. */
  speedSum: number;
  speeds: number;
  /** Turns whose calls were salvaged from text on the native channel. */
  salvaged: number;
}

export const NO_TURNS: TurnSums = {
  turns: 0,
  promptTokens: 0,
  newTokens: 0,
  generatedTokens: 0,
  speedSum: 0,
  speeds: 0,
  salvaged: 0,
};

/** What an AI message keeps of its turn (act/reply.ts). */
export interface TurnMeta {
  keel_usage?: TurnUsage;
  keel_turn?: { model?: string; salvaged?: boolean };
}

export const metaOf = (m: BaseMessage) => (m.response_metadata ?? {}) as TurnMeta;

/** The AI messages among `messages`, summed. */
export function sumTurns(messages: readonly BaseMessage[]): TurnSums {
  const sums = { ...NO_TURNS };
  for (const m of messages) {
    if (!AIMessage.isInstance(m)) continue;
    const { keel_usage: u, keel_turn: turn } = metaOf(m);
    sums.turns++;
    if (turn?.salvaged) sums.salvaged++;
    if (!u) continue;
    sums.promptTokens += u.promptTokens;
    sums.newTokens += u.newTokens;
    sums.generatedTokens += u.generatedTokens;
    if (u.tokensPerSecond !== undefined) {
      sums.speedSum += u.tokensPerSecond;
      sums.speeds++;
    }
  }
  return sums;
}

export function addSums(a: TurnSums, b: TurnSums): TurnSums {
  const out = { ...a };
  for (const k of Object.keys(out) as Array<keyof TurnSums>) out[k] += b[k];
  return out;
}
