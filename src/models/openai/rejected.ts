/**
 * A server that rejects one argument of the request (issue 27): OpenAI-style "Unrecognized request
 * argument supplied: stream_options", vLLM's pydantic "Extra inputs are not permitted" with the
 * field in `loc`, "Unsupported parameter: 'x'", serde's "unknown field `x`". keel drops the named
 * argument, sends the request again, and remembers the drop for that server. Pure.
 */

/**
 * The arguments keel may leave out and still do its work (a budget or a hint the server does not
 * take). Anything else a server rejects (messages, tools, the response format) is an error the
 * user must see: leaving it out would change what the request means.
 */
export const DROPPABLE_ARGUMENTS = [
  "stream_options",
  "parallel_tool_calls",
  "tool_choice",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "seed",
  "cache_prompt",
  "reasoning_format",
  "user",
] as const;

const NAMED = [
  /Unrecognized request arguments? supplied:?\s*['"`]?([A-Za-z_][\w.]*)/i,
  /Unsupported parameter:?\s*['"`]([A-Za-z_][\w.]*)['"`]/i,
  /unknown field\s*['"`]([A-Za-z_][\w.]*)['"`]/i,
  /['"`]?([A-Za-z_][\w]*)['"`]? is not (?:a )?(?:supported|permitted|allowed) (?:argument|parameter|field)/i,
];

/** `loc: ["body", "x"]` or `'loc': ('body', 'x')`, as pydantic reports a field (vLLM, FastAPI). */
const LOC = /['"]?loc['"]?\s*:\s*[[(]\s*['"]body['"]\s*,\s*['"]([A-Za-z_]\w*)['"]/;

/**
 * The request argument a server's error text names as the one it does not take, or undefined.
 * Reads the message of an error body or the raw text, whatever its shape.
 */
export function rejectedArgument(text: string): string | undefined {
  for (const re of NAMED) {
    const m = re.exec(text);
    if (m) return m[1]!.split(".")[0];
  }
  if (/Extra inputs are not permitted|extra_forbidden/i.test(text)) return LOC.exec(text)?.[1];
  return undefined;
}

/**
 * The argument to drop from `body` for a rejection `text`, when keel can do without it and the
 * body has it; undefined when nothing is left to drop (the error stands).
 */
export function argumentToDrop(text: string, body: Record<string, unknown>): string | undefined {
  const name = rejectedArgument(text);
  if (!name || !(DROPPABLE_ARGUMENTS as readonly string[]).includes(name)) return undefined;
  return name in body ? name : undefined;
}

/** Leaves the arguments a server rejected out of a request body. Mutates and returns it. */
export function withoutArguments<T extends Record<string, unknown>>(
  body: T,
  dropped: Iterable<string>,
): T {
  for (const name of dropped) delete body[name];
  return body;
}
