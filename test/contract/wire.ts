/** Plain HTTP for the contract suite: what the server sent, as it sent it. */

export interface Answer {
  status: number;
  /** Parsed JSON, or the text when it is not JSON. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** GET (no body) or POST (a body: an object is sent as JSON, a string as is). */
export async function call(
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(url, {
    method: body === undefined ? "GET" : "POST",
    headers: { "Content-Type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}

/** A streamed answer: the JSON of each `data:` event, and whether `[DONE]` came. */
export interface Stream {
  status: number;
  chunks: any[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  done: boolean;
  /** The error reading the stream ended with, if it did not end cleanly. */
  error?: Error;
}

/**
 * POSTs and reads a server-sent-event stream (or Ollama's JSON lines); `onChunk` sees each chunk
 * as it arrives (e.g. to kill the server after the first).
 */
export async function stream(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  onChunk?: (chunk: unknown, index: number) => void | Promise<void>,
): Promise<Stream> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const out: Stream = { status: res.status, chunks: [], done: false };
  if (!res.body) return out;
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for await (const bytes of res.body) {
      buffered += decoder.decode(bytes as Uint8Array, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        const data = line.startsWith("data:") ? line.slice(5).trim() : line;
        if (!data || line.startsWith(":")) continue;
        if (data === "[DONE]") {
          out.done = true;
          continue;
        }
        const chunk = JSON.parse(data) as unknown;
        out.chunks.push(chunk);
        await onChunk?.(chunk, out.chunks.length - 1);
      }
    }
  } catch (err) {
    out.error = err as Error;
  }
  return out;
}
