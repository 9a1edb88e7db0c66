/** One question on the terminal, answered even when the input ends first. */
import type { Interface } from "node:readline/promises";

/**
 * The answer to `text`, or "" (no) when the input ends before one comes (Ctrl-D, a closed pipe):
 * left alone, readline's question never settles then, and Node exits 13 without a word.
 */
export function question(rl: Interface, text: string): Promise<string> {
  return new Promise((resolve) => {
    const ended = () => resolve("");
    rl.once("close", ended);
    rl.question(text).then(
      (answer) => {
        rl.off("close", ended);
        resolve(answer);
      },
      () => resolve(""),
    );
  });
}
