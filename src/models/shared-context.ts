/**
 * A llama-server whose slots share one KV cache (its default, without `-np`): requests in flight
 * together share its context, and when they do not fit, its decode fails them with 500 "Context
 * size has been exceeded." (measured: four requests of 1,500 tokens on `-c 4096` all failed; keel
 * analyze with two units at once failed every attempt). `/props` and `/slots` cannot tell a shared
 * cache from one split by `-np` (each slot reports its context either way), so keel finds out: a
 * request sent while requests could overlap that fails so is sent again alone, and from then on
 * that server's requests go one at a time. One gate per server, for the process.
 */

/** llama-server's words when a batch finds no room in the KV cache. */
export const SHARED_CONTEXT_FULL = /Context size has been exceeded/i;

/** Lets a server's requests overlap until it shows they must not, then one at a time. */
export class ContextGate {
  private inFlight = 0;
  private serial = false;
  private readonly waiting: Array<() => void> = [];

  /** Whether the server's requests go one at a time. */
  get oneAtATime(): boolean {
    return this.serial;
  }

  /** Waits for the request's turn: at once, unless requests go one at a time and one is in flight. */
  async enter(): Promise<void> {
    while (this.serial && this.inFlight > 0) await new Promise<void>((r) => this.waiting.push(r));
    this.inFlight++;
  }

  /** The request is answered (or failed): the next may go. */
  leave(): void {
    this.inFlight--;
    for (const wake of this.waiting.splice(0)) wake();
  }

  /** From now on, one request at a time. */
  serialize(): void {
    this.serial = true;
  }
}

const gates = new Map<string, ContextGate>();

/** The gate of the server at `url` (one per server for the process). */
export function contextGate(url: string): ContextGate {
  let gate = gates.get(url);
  if (!gate) gates.set(url, (gate = new ContextGate()));
  return gate;
}

/**
 * Whether the server refused a request for lack of room in its shared KV cache — a 500, or a
 * stream whose first event is that error (llama-server answers a stream 200 before it decodes) —
 * and the response, readable again from its start, when it did not.
 */
export async function refusedForRoom(res: Response): Promise<{ full: boolean; res: Response }> {
  const again = (body: string | ReadableStream<Uint8Array> | null) =>
    new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  if (res.status === 500) {
    const text = await res.text();
    return { full: SHARED_CONTEXT_FULL.test(text), res: again(text) };
  }
  if (!res.ok || !res.body) return { full: false, res };
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const head = await reader.read();
  const text = head.value ? new TextDecoder().decode(head.value) : "";
  if (/^\s*data:\s*\{\s*"error"/.test(text) && SHARED_CONTEXT_FULL.test(text)) {
    await reader.cancel().catch(() => undefined);
    return { full: true, res };
  }
  const body = new ReadableStream<Uint8Array>({
    start(ctrl) {
      if (head.done) ctrl.close();
      else ctrl.enqueue(head.value);
    },
    async pull(ctrl) {
      const { done, value } = await reader.read();
      if (done) ctrl.close();
      else ctrl.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return { full: false, res: again(body) };
}
