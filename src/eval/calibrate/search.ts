/**
 * The search's arithmetic, pure: the candidates of each choice, a candidate's score from its eval
 * attempts, when one is clearly behind the leader (stopped early), and which wins.
 */
import type { Attempt } from "../run.js";
import type { ModelProfile } from "../../models/capabilities.js";
import type { FormatName } from "../../models/tool-calls/types.js";
import { promptFormat } from "../../coder/turn/tool-prompt.js";
import type { ProfileSettings, Trial } from "../../run/profiles.js";

/** The choices calibration searches, in the order it settles them. */
export const DIMENSIONS = ["thinking", "channel", "context", "budget"] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export interface Candidate {
  dimension: Dimension;
  /** For people: "native", "prompt (hermes)", "thinking cut at 512 tokens"… */
  label: string;
  settings: ProfileSettings;
}

export type SearchMode = "quick" | "full";

/**
 * The tool channels: native where the model takes tools (keel's default then), prompt mode with the
 * call syntax of the model's family, and prompt mode with another one (Hermes JSON, or plain JSON
 * where the family's is Hermes).
 */
export function channelCandidates(
  profile: Pick<ModelProfile, "capabilities" | "format">,
): Candidate[] {
  const own: FormatName = promptFormat(profile.format);
  const other: FormatName = own === "hermes" ? "llama3-json" : "hermes";
  const prompt = (f: FormatName): Candidate => ({
    dimension: "channel",
    label: `prompt (${f})`,
    settings: { toolMode: "prompt", toolFormat: f },
  });
  return [
    ...(profile.capabilities.includes("tools")
      ? [
          {
            dimension: "channel" as const,
            label: "native",
            settings: { toolMode: "native" as const },
          },
        ]
      : []),
    prompt(own),
    prompt(other),
  ];
}

/** The windows: keel's, and the largest smaller one the canary showed the model still reads whole. */
export function contextCandidates(window: number, recalled: number | undefined): Candidate[] {
  const at = (w: number): Candidate => ({
    dimension: "context",
    label: `window ${w}`,
    settings: { contextWindow: w },
  });
  return recalled !== undefined && recalled < window ? [at(window), at(recalled)] : [at(window)];
}

/** Thinking, for a model that thinks on a server that takes `think` (Ollama): on, off, cut. */
export function thinkingCandidates(
  profile: Pick<ModelProfile, "capabilities" | "format">,
  takesThink: boolean,
  mode: SearchMode,
): Candidate[] {
  if (!takesThink || !profile.capabilities.includes("thinking")) return [];
  const c = (label: string, settings: ProfileSettings): Candidate => ({
    dimension: "thinking",
    label,
    settings,
  });
  const cuts = mode === "quick" ? [512] : [256, 1024, 4096];
  const levels =
    mode === "full" && profile.format === "harmony"
      ? (["low", "medium", "high"] as const).map((l) => c(`thinking ${l}`, { think: l }))
      : [];
  return [
    c("thinking on", { think: "on" }),
    c("thinking off", { think: "off" }),
    ...cuts.map((n) => c(`thinking cut at ${n} tokens`, { think: "on", thinkCut: n })),
    ...levels,
  ];
}

/** The act turn's budget: keel's, and smaller ones that stop a rambling reply sooner. */
export function budgetCandidates(act: number, mode: SearchMode): Candidate[] {
  const smaller = (mode === "quick" ? [2048] : [4096, 2048]).filter((n) => n < act);
  return [act, ...smaller].map((n, i) => ({
    dimension: "budget",
    label: `act budget ${n}${i === 0 ? " (keel's)" : ""}`,
    settings: i === 0 ? {} : { generationBudget: { act: n } },
  }));
}

/** A candidate's numbers from its attempts (each task `k` times, fewer if it was stopped). */
export function trialOf(
  c: Candidate,
  attempts: readonly Attempt[],
  tasks: readonly string[],
  k: number,
  stopped?: string,
): Trial {
  const calls = attempts.reduce((n, a) => n + a.calls, 0);
  const wellFormed = attempts.reduce((n, a) => n + a.wellFormed, 0);
  const mine = (t: string) => attempts.filter((a) => a.task === t);
  return {
    dimension: c.dimension,
    label: c.label,
    settings: c.settings,
    passK: tasks.filter((t) => mine(t).length === k && mine(t).every((a) => a.pass)).length,
    tasks: tasks.length,
    passes: attempts.filter((a) => a.pass).length,
    attempts: attempts.length,
    wellFormed: calls === 0 ? 0 : wellFormed / calls,
    seconds: attempts.length ? attempts.reduce((n, a) => n + a.seconds, 0) / attempts.length : 0,
    ...(stopped ? { stopped } : {}),
  };
}

/**
 * Clearly behind: even if every attempt it has left passed, the candidate would pass fewer than
 * the leader did. Then it stops (what it did is kept in the profile with why it stopped).
 */
export function clearlyBehind(passes: number, left: number, leader: Trial | undefined): boolean {
  return leader !== undefined && passes + left < leader.passes;
}

/**
 * How much faster a candidate must be to beat an equal one that came first (keel's default): a
 * quarter less time per attempt, and a second at least (timing on a shared machine wobbles).
 */
const FASTER = 0.75;
const FASTER_BY_S = 1;

/**
 * Whether `b` beats `a`: more tasks passed all k times, then more attempts passed, then a larger
 * share of well-formed calls; on a tie, only a clearly faster one (a quarter less time per
 * attempt, and a second), so an earlier candidate (keel's default comes first) does not lose its
 * place by chance of timing alone.
 */
export function beats(b: Trial, a: Trial): boolean {
  if (b.stopped && !a.stopped) return false;
  if (b.passK !== a.passK) return b.passK > a.passK;
  if (b.passes !== a.passes) return b.passes > a.passes;
  if (Math.abs(b.wellFormed - a.wellFormed) > 0.05) return b.wellFormed > a.wellFormed;
  return b.seconds > 0 && b.seconds < a.seconds * FASTER && a.seconds - b.seconds >= FASTER_BY_S;
}

/** The winner of a choice's trials (the first, keel's default, unless another beats it), and why. */
export function pickWinner(trials: readonly Trial[]): { winner: Trial; why: string } {
  let winner = trials[0]!;
  for (const t of trials.slice(1)) if (beats(t, winner)) winner = t;
  const first = trials[0]!;
  const score = (t: Trial) =>
    `pass^k ${t.passK}/${t.tasks}, ${t.passes}/${t.attempts} attempts, ${Math.round(t.wellFormed * 100)}% well-formed, ${t.seconds.toFixed(1)} s each`;
  if (trials.length === 1) return { winner, why: "the only choice here" };
  if (winner === first)
    return { winner, why: `keel's default held: ${score(winner)}; no other did better` };
  return { winner, why: `${score(winner)}, against keel's default: ${score(first)}` };
}
