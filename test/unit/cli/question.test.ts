/** One question on the terminal: it settles whatever happens to the input or the run. */
import { PassThrough } from "node:stream";
import { createInterface } from "node:readline/promises";
import { describe, expect, it, vi } from "vitest";
import { question } from "../../../src/cli/question.js";

const terminal = () => {
  const input = new PassThrough();
  const rl = createInterface({ input, output: new PassThrough(), terminal: true });
  return { input, rl };
};

describe("question", () => {
  it("is the line typed", async () => {
    const { input, rl } = terminal();
    const answer = question(rl, "? ");
    input.write("yes\r");
    expect(await answer).toBe("yes");
    rl.close();
  });

  it("is no when the input ends, and when the run is stopped while a person is asked (SIGTERM)", async () => {
    const a = terminal();
    const ended = question(a.rl, "? ");
    a.input.end();
    expect(await ended).toBe("");
    const b = terminal();
    const stop = new AbortController();
    const stopped = question(b.rl, "? ", stop.signal);
    stop.abort();
    expect(await stopped).toBe("");
    expect(await question(b.rl, "? ", stop.signal)).toBe("");
    b.rl.close();
  });

  it("is no at Ctrl-C typed at the prompt, which stops the run (readline takes it from the terminal)", async () => {
    const { input, rl } = terminal();
    const onCtrlC = vi.fn();
    const answer = question(rl, "? ", undefined, onCtrlC);
    input.write("\x03");
    expect(await answer).toBe("");
    expect(onCtrlC).toHaveBeenCalledTimes(1);
    rl.close();
  });
});
