/**
 * A reply that copies keel's own instructions word for word — prompt mode's tool block ("To call a
 * tool, write exactly this form…", every tool's description and parameters) — instead of answering.
 * A real llama-server's SmolLM2-135M began its replies with the block's first lines, and one reply
 * that began so ran on for 6,670 tokens (4.4 minutes), held back from the screen once a call's
 * markup had opened (its text was not kept; no loop rule had stopped it). Read on the streamed
 * text, so such a reply is stopped after a few hundred characters. Only keel's own text is
 * compared: the project's instructions (AGENTS.md) and what tools returned are the model's to
 * quote. Pure.
 */

/** Characters of the reply's tail, whitespace squeezed, that must stand word for word in the instructions. */
export const ECHO_SPAN = 300;

const squeeze = (text: string) => text.replace(/\s+/g, " ");

/**
 * A watch over one reply for `instructions`: given the reply so far, the start of the span it
 * copied (its first 80 characters), once its last `ECHO_SPAN` characters stand in them.
 */
export function echoWatch(instructions: string): (reply: string) => string | undefined {
  const source = squeeze(instructions);
  if (source.length < ECHO_SPAN) return () => undefined;
  return (reply) => {
    const tail = squeeze(reply.slice(-3 * ECHO_SPAN))
      .trimEnd()
      .slice(-ECHO_SPAN);
    return tail.length === ECHO_SPAN && source.includes(tail) ? tail.slice(0, 80) : undefined;
  };
}
