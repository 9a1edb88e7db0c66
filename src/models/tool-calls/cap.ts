/**
 * How many tool calls one reply may make. The cap is the one source for the number: the parser
 * applies it to calls written as text, the act node to the calls of the tools API.
 *
 * Coding agents' parallel batches are a handful of calls, rarely more than a dozen (reading
 * several files at once); 64 leaves room for any real batch. A reply with thousands of calls is a
 * server that ignored the generation budget, or a model looping: its calls past the cap are not
 * run, and the model is told.
 */
import { quote } from "./entries.js";
import type { RejectedCall } from "./types.js";

export const MAX_CALLS_PER_REPLY = 64;

/** The calls that run, and the entry that tells the model about the rest (none when under the cap). */
export function capped<T extends { name: string; arguments?: unknown; args?: unknown }>(
  calls: readonly T[],
): { run: T[]; over: RejectedCall[] } {
  if (calls.length <= MAX_CALLS_PER_REPLY) return { run: [...calls], over: [] };
  const first = calls[MAX_CALLS_PER_REPLY]!;
  const rest = calls.length - MAX_CALLS_PER_REPLY;
  return {
    run: calls.slice(0, MAX_CALLS_PER_REPLY),
    over: [
      {
        text: `${first.name} ${quote(first.arguments ?? first.args ?? {})}${rest > 1 ? ` and the ${rest - 1} after it` : ""}`,
        reason: `keel runs at most ${MAX_CALLS_PER_REPLY} tool calls per reply; the reply had ${calls.length}`,
        count: rest,
      },
    ],
  };
}
