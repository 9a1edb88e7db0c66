/**
 * Reading the server's own count of the prompt, pure. Ollama reports `prompt_eval_count`: the
 * tokens of the prompt the model saw, cached or not (ollama PR 16428 keeps that meaning). A prompt
 * over the window is cut at the front and still answered with 200: the runner keeps
 * `num_ctx/2 + 2` tokens (docs/servers.md, ollama issues 3839 and 17427), so the count comes back near
 * half the window, or at the window on servers that keep all they can.
 *
 * From honest counts keel learns how many server tokens its own estimate is worth for this model
 * (dense text — code, CJK — has far more tokens per character than the chars/3.5 guess).
 */

export interface PromptVerdict {
  /** The server cut the prompt: its answer was made without the prompt's start. */
  truncated: boolean;
  /** The calibration to use from now on. */
  scale: number;
}

const MIN_SCALE = 0.4;
const MAX_SCALE = 4;
const clamp = (x: number) => Math.min(MAX_SCALE, Math.max(MIN_SCALE, x));

/**
 * Judges one reply's `reported` prompt count against keel's `estimated` tokens (uncalibrated)
 * under `numCtx`, and updates `scale`. Without a count (a server or model that reports none),
 * nothing changes.
 */
export function judgePrompt(
  estimated: number,
  reported: number | undefined,
  numCtx: number,
  scale: number,
): PromptVerdict {
  if (!reported || reported <= 0 || estimated <= 0) return { truncated: false, scale };
  const half = Math.floor(numCtx / 2) + 2;
  const expected = estimated * scale;
  const truncated =
    reported >= numCtx - 8 || (Math.abs(reported - half) <= 16 && reported < 0.7 * expected);
  if (truncated) {
    // All that is known: the real prompt was over the window. Be at least that pessimistic, and
    // a quarter more than before, so the refitted prompt lands well inside.
    return { truncated, scale: clamp(Math.max(scale * 1.25, (numCtx / estimated) * 1.1)) };
  }
  // Short prompts say little (template overhead dominates); otherwise move halfway to what was seen.
  if (estimated < 200) return { truncated, scale };
  const seen = reported / estimated;
  return { truncated, scale: clamp((scale + seen) / 2) };
}
