/**
 * The `fetch` keel gives every chat model, whatever the provider: the request body rewritten where
 * the client library cannot say what the server needs, each line of the response repaired where the
 * server sends what the library cannot read, and deadlines for the first byte and between streamed
 * chunks, so a silent server fails with a timeout instead of hanging the run. What a call adds that
 * the library cannot carry (the thinking of earlier turns) travels beside it in `withWireTurn`.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** What one model call adds on the wire that the client library cannot carry. */
export interface WireTurn {
  /** The thinking of each assistant message of the call's history, in order (undefined: none). */
  thinking: Array<string | undefined>;
}

const wireTurn = new AsyncLocalStorage<WireTurn>();

/** Runs one model call with `turn`'s additions applied to the request it sends. */
export function withWireTurn<T>(turn: WireTurn, call: () => Promise<T>): Promise<T> {
  return wireTurn.run(turn, call);
}

/** The additions of the model call in progress, if any. */
export const currentWireTurn = (): WireTurn | undefined => wireTurn.getStore();

export class ModelTimeoutError extends Error {
  override name = "ModelTimeoutError";
}

export interface WireFetchOptions {
  /** Most ms to wait for response headers, and between two streamed chunks. */
  timeoutMs: number;
  /** Which requests are chat requests (the only ones rewritten and repaired). */
  isChat: (pathname: string) => boolean;
  /** Rewrites a chat request's parsed JSON body (mutate and return it). */
  request?: (body: Record<string, unknown>) => Record<string, unknown>;
  /** Repairs one line of a chat response (NDJSON line or SSE `data:` line). */
  line?: (line: string) => string;
  baseFetch?: typeof fetch;
}

/** Builds the fetch (see the module comment). */
export function createWireFetch(opts: WireFetchOptions): typeof fetch {
  const base = opts.baseFetch ?? fetch;
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const isChat = opts.isChat(new URL(url).pathname);
    let body = init?.body;
    if (isChat && opts.request && typeof body === "string") {
      try {
        body = JSON.stringify(opts.request(JSON.parse(body) as Record<string, unknown>));
      } catch {
        // Leave a body we cannot read as it is.
      }
    }
    const controller = new AbortController();
    const signal = init?.signal
      ? AbortSignal.any([init.signal, controller.signal])
      : controller.signal;
    const arm = (what: string) =>
      setTimeout(
        () =>
          controller.abort(
            new ModelTimeoutError(`no ${what} from ${url} within ${opts.timeoutMs} ms`),
          ),
        opts.timeoutMs,
      );
    let timer = arm("response");
    let res: Response;
    try {
      res = await base(input, { ...init, body, signal });
    } finally {
      clearTimeout(timer);
    }
    if (!res.body || !isChat) return res;

    const repair = opts.line ?? ((l: string) => l);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let pending = "";
    const stream = new ReadableStream<Uint8Array>({
      async pull(ctrl) {
        timer = arm("data");
        try {
          const { done, value } = await reader.read();
          if (done) {
            if (pending) ctrl.enqueue(encoder.encode(repair(pending)));
            ctrl.close();
            return;
          }
          pending += decoder.decode(value, { stream: true });
          const cut = pending.lastIndexOf("\n");
          if (cut >= 0) {
            const lines = pending.slice(0, cut).split("\n").map(repair);
            pending = pending.slice(cut + 1);
            ctrl.enqueue(encoder.encode(lines.join("\n") + "\n"));
          }
        } catch (err) {
          ctrl.error(signal.aborted && signal.reason instanceof Error ? signal.reason : err);
        } finally {
          clearTimeout(timer);
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
    return new Response(stream, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };
}
