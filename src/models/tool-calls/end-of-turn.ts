/** The end-of-turn tokens of chat templates, as they may be left in a reply's text after a call. */

/**
 * End-of-turn tokens a server may leave in the text after a call (it did not skip special tokens):
 * Llama 3's, ChatML's, Mistral's and Llama 2's `</s>`, Phi's, Granite's, Gemma's, DeepSeek's,
 * Command's. After a call they are not prose: a call followed only by them still ends the reply.
 */
export const END_OF_TURN: readonly string[] = [
  "<|eot_id|>",
  "<|eom_id|>",
  "<|eot|>",
  "<|im_end|>",
  "<|endoftext|>",
  "<|end_of_text|>",
  "<|end|>",
  "</s>",
  "<end_of_turn>",
  "<turn|>",
  "<｜end▁of▁sentence｜>",
  "<|end_of_sentence|>",
  "<|END_OF_TURN_TOKEN|>",
];

/** Length of the end-of-turn tokens (and the whitespace before each) at `at` in `text` (0: none). */
export function endOfTurnAt(text: string, at: number): number {
  let end = at;
  for (;;) {
    let i = end;
    while (i < text.length && /\s/.test(text[i]!)) i++;
    const token = END_OF_TURN.find((t) => text.startsWith(t, i));
    if (!token) return end - at;
    end = i + token.length;
  }
}

/** Whether `text` from `at` to `to` holds nothing but whitespace and end-of-turn tokens. */
export const onlyEndOfTurn = (text: string, at: number, to = text.length): boolean => {
  const part = text.slice(0, to);
  return part.slice(at + endOfTurnAt(part, at)).trim() === "";
};

/**
 * The end of the last character in `text` from `from` to `to` that is neither whitespace nor part
 * of an end-of-turn token (`from` when there is none): read backwards from `to`, only as far as
 * that character.
 */
export function proseEnd(text: string, from: number, to: number): number {
  let at = to;
  for (;;) {
    while (at > from && /\s/.test(text[at - 1]!)) at--;
    const token = END_OF_TURN.find(
      (t) => at - t.length >= from && text.startsWith(t, at - t.length),
    );
    if (!token) return at;
    at -= token.length;
  }
}
