/**
 * A request the model server's connection dropped before any answer, sent again at once.
 *
 * llama-server closes its connection after every response while announcing keep-alive
 * (`Keep-Alive: timeout=5, max=100`): a request the client sends on that pooled connection before
 * it has read the close meets "other side closed". On a real llama-server this was 3 of 9 turns
 * of a run, each costing a retry's backoff (0.4–0.6 s) and a "request failed" line. The server
 * never read such a request, so sending it again is safe, and is done without a wait, a few times
 * (the client's pool can hold several connections the server closed, each dropping one send);
 * any other failure is the caller's (retry.ts).
 */

/** How many times one request is sent again after drops: more than a pool holds dead connections. */
const RESENDS = 4;

/** Whether a fetch failed because its connection was closed or reset before any answer. */
export function closedUnanswered(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === "UND_ERR_SOCKET" || code === "ECONNRESET";
}

/** `base`, sending a request again at once when its connection closed before any answer. */
export function resendingDropped(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    // a Request carries a body that cannot be read twice; a stream body neither
    const again =
      !(input instanceof Request) &&
      (init?.body === undefined || init.body === null || typeof init.body === "string");
    for (let resends = 0; ; resends++) {
      try {
        return await base(input, init);
      } catch (err) {
        if (!again || resends === RESENDS || init?.signal?.aborted || !closedUnanswered(err))
          throw err;
      }
    }
  };
}
