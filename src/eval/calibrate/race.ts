/**
 * One choice settled by racing its candidates over keel eval's tasks. The candidates take turns,
 * task by task and round by round (keel's default first), so each is judged against what the
 * others have done so far: one stops as soon as, even passing every attempt it has left, it
 * would pass fewer than the leader already did. A model that passes nothing and makes no
 * well-formed call on the first task — with the first two tool channels, or every candidate of
 * another choice — ends the search: nothing later can be told apart.
 */
import type { SettingsInput } from "../../coder/context.js";
import type { ProfileSettings, Profile, Trial } from "../../run/profiles.js";
import { runAttempt, type Attempt } from "../run.js";
import type { EvalTask } from "../tasks.js";
import { clearlyBehind, pickWinner, trialOf, type Candidate, type SearchMode } from "./search.js";

/** Most model turns of one attempt: a weak model that never finishes costs no more than this. */
const ATTEMPT_TURNS = { quick: 3, full: 20 } as const;

/**
 * `--quick`'s bound on each reply of an attempt (its tasks' solutions take under 200 tokens a
 * turn; a thinking model gets room to think): a model that rambles costs seconds, not minutes.
 * `--full` runs with keel's own budgets.
 */
const QUICK_BUDGET = (thinks: boolean) => ({ plan: 256, act: thinks ? 2048 : 512, summary: 256 });

/** The search's state: what won so far (it holds while the next choice is tried). */
export interface Search {
  settings: Omit<SettingsInput, "workspace">;
  model: string;
  mode: SearchMode;
  k: number;
  tasks: readonly EvalTask[];
  checkpoints: string;
  /** The model thinks (its quick budget leaves room for thought). */
  thinks: boolean;
  defaultMode: "native" | "prompt";
  chosen: ProfileSettings;
  trials: Trial[];
  decisions: Profile["decisions"];
  attempts: number;
  /** Why the search ended before its last choice, if it did. */
  ended?: string;
  say: (line: string) => void;
}

interface Run {
  c: Candidate;
  attempts: Attempt[];
  stopped?: string;
}

const passes = (r: Run) => r.attempts.filter((a) => a.pass).length;

/** Settles one choice: races its candidates, keeps the winner (and every trial, for `--show`). */
export async function settle(search: Search, candidates: Candidate[]): Promise<void> {
  if (candidates.length === 0 || search.ended) return;
  const dimension = candidates[0]!.dimension;
  if (candidates.length === 1) {
    search.decisions.push({ dimension, winner: candidates[0]!.label, why: "the only choice here" });
    return;
  }
  const runs: Run[] = candidates.map((c) => ({ c, attempts: [] }));
  const total = search.tasks.length * search.k;
  for (let round = 1; round <= search.k; round++)
    for (const [t, task] of search.tasks.entries()) {
      for (const r of runs) {
        if (r.stopped) continue;
        const lead = runs.reduce((best, o) => (passes(o) > passes(best) ? o : best));
        const leader = trialOf(lead.c, lead.attempts, [], search.k);
        if (clearlyBehind(passes(r), total - r.attempts.length, leader)) {
          r.stopped = `clearly behind: ${passes(r)} of ${r.attempts.length} passed, ${lead.c.label} passed ${passes(lead)}`;
          search.say(`${dimension.padEnd(8)} ${r.c.label}: stopped, ${r.stopped}`);
          continue;
        }
        const a = await attempt(search, r.c, task, round);
        r.attempts.push(a);
        const now = runs.reduce((best, o) => (passes(o) > passes(best) ? o : best));
        search.say(
          `${dimension.padEnd(8)} ${r.c.label} · ${task.id} #${round}: ${a.pass ? "pass" : "fail"}, ${a.wellFormed}/${a.calls} calls well formed, ${a.seconds.toFixed(1)} s · leads: ${now.c.label} (${passes(now)} passed)`,
        );
        const tried = runs.filter((x) => x.attempts.length > 0);
        // a third call syntax does not rescue a model that drives neither channel; a thinking
        // cut may rescue one that fails thinking on and off: there, every candidate is tried
        const enough = dimension === "channel" ? 2 : runs.length;
        if (round === 1 && t === 0 && tried.length >= enough && hopeless(tried)) {
          search.ended = `on ${task.id}, ${tried.map((x) => x.c.label).join(" and ")} passed nothing and made no well-formed call: nothing later can be told apart, keel's defaults stand`;
          for (const x of runs) x.stopped ??= "the search ended: the model passed nothing";
          break;
        }
      }
      if (search.ended) break;
    }
  const trials = runs.map((r) =>
    trialOf(
      r.c,
      r.attempts,
      search.tasks.map((t) => t.id),
      search.k,
      r.stopped,
    ),
  );
  // an ended search leaves keel's default (the first candidate) standing, whatever else was tried
  const { winner, why } = search.ended
    ? { winner: trials[0]!, why: search.ended }
    : pickWinner(trials);
  search.trials.push(...trials);
  search.decisions.push({ dimension, winner: winner.label, why });
  // keel's default is not written into the profile: only what differs
  if (winner !== trials[0]) Object.assign(search.chosen, winner.settings);
  search.say(`${dimension.padEnd(8)} → ${winner.label}: ${why}`);
}

const hopeless = (runs: Run[]) =>
  runs.every((r) => r.attempts.every((a) => !a.pass && a.wellFormed === 0));

/** One attempt of a candidate, with what won before it. */
function attempt(search: Search, c: Candidate, task: EvalTask, round: number): Promise<Attempt> {
  const { toolMode, concurrency: _concurrency, ...rest } = { ...search.chosen, ...c.settings };
  search.attempts++;
  return runAttempt({
    task,
    attempt: round,
    mode: toolMode ?? search.defaultMode,
    thread: `calibrate-${search.attempts}-${task.id}`,
    checkpoints: search.checkpoints,
    settings: {
      ...search.settings,
      model: search.model,
      maxTurns: ATTEMPT_TURNS[search.mode],
      ...(search.mode === "quick" ? { generationBudget: QUICK_BUDGET(search.thinks) } : {}),
      ...rest,
    },
    profile: false,
  });
}
