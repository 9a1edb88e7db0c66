/** One question on the terminal, answered even when the input ends first. */
import type { Interface } from "node:readline/promises";

/**
 * The answer to `text`, or "" (no) when the input ends before one comes (Ctrl-D, a closed pipe):
 * left alone, readline's question never settles then, and Node exits 13 without a word. Also "" when
 * `stop` fires (SIGTERM while a person is asked), and at Ctrl-C typed at the prompt (readline takes
 * it from the terminal, so no SIGINT reaches the process), after `onCtrlC` (the run stops now).
 */
export function question(
  rl: Interface,
  text: string,
  stop?: AbortSignal,
  onCtrlC?: () => void,
): Promise<string> {
  return new Promise((resolve) => {
    const settle = (answer: string) => {
      rl.off("close", ended);
      rl.off("SIGINT", ctrlC);
      resolve(answer);
    };
    const ended = () => settle("");
    const ctrlC = () => {
      onCtrlC?.();
      settle("");
    };
    rl.once("close", ended);
    if (onCtrlC) rl.once("SIGINT", ctrlC);
    // a stop cancels the question (it rejects: no)
    (stop ? rl.question(text, { signal: stop }) : rl.question(text)).then(settle, () => settle(""));
  });
}
