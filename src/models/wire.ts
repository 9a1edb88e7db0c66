/**
 * The `fetch` keel gives every chat model, whatever the provider: the request body rewritten where
 * the client library cannot say what the server needs, each line of the response repaired where the
 * server sends what the library cannot read, and deadlines for the first byte and between streamed
 * chunks, so a silent server fails with a timeout instead of hanging the run.
 *
 * A model call made through `callOverWire` gives its request what the library cannot carry (the
 * thinking of earlier turns, the generation budget…) and returns, with the call's own result, what
 * the wire read of the answer that the library drops (`WireFacts`): the facts come back as part of
 * the call's value. The fetch, called deep inside the client library, finds its call's record in
 * an AsyncLocalStorage that nothing outside this module sees.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { echoWatch } from "../guard/echo.js";
import { estimateTokens } from "../guard/token-estimate.js";
import { loopingTail } from "../guard/repetition.js";
import { refusedForRoom, type ContextGate } from "./shared-context.js";
import { resendingDropped } from "./retry.js";

/** What one model call adds on the wire that the client library cannot carry. */
export interface WireTurn {
  /** The thinking of each assistant message of the call's history, in order (undefined: none). */
  thinking: Array<string | undefined>;
  /** The call's generation budget (`max_tokens` / `num_predict`), see budget.ts. */
  maxTokens?: number;
  /**
   * llama.cpp: `n_cache_reuse` for this call (settings `cacheReuse`), while the run folds for a
   * server that shifts runs of its cache into place (history/fit.ts `shift`).
   */
  cacheReuse?: number;
  /**
   * keel's own instructions in the prompt (prompt mode's tool block): a reply that copies them at
   * length is stopped as a loop is (guard/echo.ts).
   */
  instructions?: string;
  /**
   * Thinking models (settings `thinkCut`): a reply still thinking after this many tokens is
   * stopped there (`WireFacts.thoughtCut`), as a loop is, for the turn to go on from the partial
   * thought.
   */
  thinkCut?: number;
  /** Ollama: `think` for this call only, instead of the run's (the turn asked again without thinking). */
  think?: boolean;
  /**
   * The run's stop (the node's signal): every request of the turn is cut when it fires, whether or
   * not the client library passes a signal of its own on (a hung server would otherwise hold a
   * stopped run for the whole request timeout).
   */
  signal?: AbortSignal;
}

/** What a server reported of one answer that the client library does not keep. */
export interface WireFacts {
  /** Prompt tokens the server took from its cache (`prompt_tokens_details.cached_tokens`, `timings.cache_n`). */
  cachedTokens?: number;
  /** Prompt tokens it evaluated anew (`timings.prompt_n`). */
  evaluatedTokens?: number;
  /**
   * Why the server stopped (`finish_reason`, Ollama's `done_reason`): the client libraries drop it
   * from a streamed reply, and "length" means the reply, and any call in it, was cut.
   */
  finishReason?: string;
  /**
   * keel stopped the streamed reply: it had fallen into a loop (the unit it repeated). The stream
   * ends as a reply cut at its budget would (`finishReason` "length"), and the server stops.
   */
  looped?: string;
  /** What keel stopped (`looped`) was a copy of its own instructions, not a loop. */
  echoed?: true;
  /**
   * The ids the server gave the reply's calls, in order, where the client library replaces them
   * with its own (ChatOllama: a random UUID for Ollama's `call_` id): reply-facts.ts.
   */
  callIds?: Array<string | undefined>;
  /**
   * keel stopped the reply's thinking at the turn's `thinkCut`: the thinking so far. The stream
   * ends as a cut reply's does.
   */
  thoughtCut?: string;
  /**
   * For a reply keel stopped (`looped`), of which the server counted nothing: the streamed events
   * that added text (a local server streams about one token per event).
   */
  streamedPieces?: number;
}

/** A model call's result with what the wire read of its answer. */
export type OverWire<T> = { value: T; facts: WireFacts };

/** The model call in progress: what it adds to its requests, and what its answers reported. */
interface WireCall {
  turn: WireTurn;
  facts: WireFacts;
}

const wireCall = new AsyncLocalStorage<WireCall>();

/**
 * Runs one model call with `turn`'s additions applied to the requests it sends; returns its value
 * and the facts of its answer. A call that throws rethrows, unless `rescue` (given the error and
 * the facts that arrived before it) returns a value to stand for it.
 */
export async function callOverWire<T>(
  turn: WireTurn,
  call: () => Promise<T>,
  rescue?: (error: unknown, facts: WireFacts) => T,
): Promise<OverWire<T>> {
  const facts: WireFacts = {};
  try {
    return { value: await wireCall.run({ turn, facts }, call), facts };
  } catch (error) {
    if (!rescue) throw error;
    return { value: rescue(error, facts), facts };
  }
}

/** The additions of the model call in progress, if any (for the providers' request hooks). */
export const currentWireTurn = (): WireTurn | undefined => wireCall.getStore()?.turn;

export class ModelTimeoutError extends Error {
  override name = "ModelTimeoutError";
}

export interface WireFetchOptions {
  /** Most ms to wait for response headers, and between two streamed chunks. */
  timeoutMs: number;
  /** Which requests are chat requests (the only ones rewritten and repaired). */
  isChat: (pathname: string) => boolean;
  /**
   * The text one streamed response line adds to the reply, its prose (content, thinking) apart
   * from its call arguments: what the loop watch reads. Without it, no watch.
   */
  generated?: (line: string) => StreamedText;
  /** The lines that end a stream the way a reply cut at its budget ends, in the server's dialect. */
  cutEnd?: string;
  /** Rewrites a chat request's parsed JSON body (mutate and return it). */
  request?: (body: Record<string, unknown>) => Record<string, unknown>;
  /**
   * Repairs one line of a chat response (NDJSON line or SSE `data:` line), noting in `facts` (the
   * model call's, captured when the request was sent) what the line reports.
   */
  line?: (line: string, facts: WireFacts | undefined) => string;
  /**
   * A chat request the server refused (status ≥ 400, its error text): the body to send instead,
   * or undefined to let the refusal stand. Called again after each resend, so a server that
   * rejects several arguments one by one gets each dropped.
   */
  resend?: (
    status: number,
    text: string,
    body: Record<string, unknown>,
  ) => Promise<Record<string, unknown> | undefined>;
  /**
   * Chat requests to a server whose slots may share one KV cache pass through its gate: one that
   * fails for lack of room while others could be in flight is sent again alone, and the server's
   * requests go one at a time from then on (shared-context.ts).
   */
  gate?: ContextGate;
  baseFetch?: typeof fetch;
}

/** Builds the fetch (see the module comment). */
export function createWireFetch(opts: WireFetchOptions): typeof fetch {
  const base = resendingDropped(opts.baseFetch ?? fetch);
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const call = wireCall.getStore();
    const turn = call?.turn;
    const isChat = opts.isChat(new URL(url).pathname);
    const { body, parsed } = rewritten(opts, isChat, init?.body);
    const controller = new AbortController();
    const signal = AbortSignal.any(
      [init?.signal, controller.signal, turn?.signal].filter((s): s is AbortSignal => !!s),
    );
    const arm = (what: string) =>
      setTimeout(
        () =>
          controller.abort(
            new ModelTimeoutError(`no ${what} from ${url} within ${opts.timeoutMs} ms`),
          ),
        opts.timeoutMs,
      );
    const gate = isChat ? opts.gate : undefined;
    const hold = holdGate(gate, opts.timeoutMs);
    const send = (b: RequestInit["body"]) => base(input, { ...init, body: b, signal });
    const res = await answerOf({ send, arm, hold, gate }, body, parsed, opts.resend);
    if (!res.body || !isChat) {
      hold.release();
      return res;
    }
    return repairedStream(res, call, opts, { arm, hold, controller, signal });
  };
}

/** A chat request's body as `opts.request` rewrites it (a body it cannot read is left as it is). */
function rewritten(
  opts: WireFetchOptions,
  isChat: boolean,
  body: RequestInit["body"],
): { body: RequestInit["body"]; parsed?: Record<string, unknown> } {
  if (!isChat || !opts.request || typeof body !== "string") return { body };
  try {
    const parsed = opts.request(JSON.parse(body) as Record<string, unknown>);
    return { body: JSON.stringify(parsed), parsed };
  } catch {
    // Leave a body we cannot read as it is.
    return { body };
  }
}

type GateHold = ReturnType<typeof holdGate>;

/** One request's turn at the server's gate (shared-context.ts), if it passes one. */
function holdGate(gate: ContextGate | undefined, timeoutMs: number) {
  let held = false;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const release = () => {
    clearTimeout(idle);
    if (held) gate?.leave();
    held = false;
  };
  return {
    enter: async () => {
      await gate?.enter();
      held = gate !== undefined;
    },
    release,
    stopIdle: () => clearTimeout(idle),
    // An answer its reader stops reading without cancelling lets the server's next request go.
    watchIdle: () => {
      clearTimeout(idle);
      if (held) idle = setTimeout(release, timeoutMs).unref();
    },
  };
}

/** How one request is sent, timed and held at the gate. */
interface Sending {
  send: (body: RequestInit["body"]) => Promise<Response>;
  arm: (what: string) => ReturnType<typeof setTimeout>;
  hold: GateHold;
  gate: ContextGate | undefined;
}

/**
 * The server's answer to a request: sent again alone when it found no room beside the requests in
 * flight, and again with the body `resend` gives while the server refuses it.
 */
async function answerOf(
  s: Sending,
  body: RequestInit["body"],
  parsed: Record<string, unknown> | undefined,
  resend: WireFetchOptions["resend"],
): Promise<Response> {
  await s.hold.enter();
  const overlapping = s.gate !== undefined && !s.gate.oneAtATime;
  let timer = s.arm("response");
  let res: Response;
  try {
    res = await s.send(body);
    if (overlapping) {
      const seen = await refusedForRoom(res);
      res = seen.res;
      if (seen.full && s.gate) {
        // No room for it beside the requests in flight: alone, and one at a time from now on.
        s.gate.serialize();
        s.hold.release();
        clearTimeout(timer);
        await s.hold.enter();
        timer = s.arm("response");
        res = await s.send(body);
      }
    }
    while (parsed && resend && res.status >= 400) {
      const text = await res.text();
      const next = await resend(res.status, text, parsed);
      if (!next) {
        res = new Response(text, {
          status: res.status,
          statusText: res.statusText,
          headers: res.headers,
        });
        break;
      }
      parsed = next;
      body = JSON.stringify(next);
      res = await s.send(body);
    }
  } catch (err) {
    s.hold.release();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return res;
}

/**
 * A chat answer's stream, each line repaired, each chunk awaited within the deadline, and the reply
 * ended as a cut one where the loop watch stops it.
 */
function repairedStream(
  res: Response,
  call: WireCall | undefined,
  opts: WireFetchOptions,
  t: {
    arm: Sending["arm"];
    hold: GateHold;
    controller: AbortController;
    signal: AbortSignal;
  },
): Response {
  const turn = call?.turn;
  const { hold } = t;
  const repair = opts.line ? (l: string) => opts.line!(l, call?.facts) : (l: string) => l;
  const watch =
    opts.generated && opts.cutEnd && turn
      ? loopWatch(opts.generated, turn.instructions, turn.thinkCut)
      : undefined;
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  const stream = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      hold.stopIdle();
      const timer = t.arm("data");
      try {
        const { done, value } = await reader.read();
        if (done) {
          if (pending) ctrl.enqueue(encoder.encode(repair(pending)));
          ctrl.close();
          hold.release();
          return;
        }
        pending += decoder.decode(value, { stream: true });
        const cut = pending.lastIndexOf("\n");
        if (cut >= 0) {
          const lines = pending.slice(0, cut).split("\n").map(repair);
          pending = pending.slice(cut + 1);
          ctrl.enqueue(encoder.encode(lines.join("\n") + "\n"));
          const stop = watch?.look(lines);
          if (stop !== undefined) {
            // Ended as a cut reply: the client library keeps what came, keel runs none of it.
            Object.assign(
              call!.facts,
              "thought" in stop
                ? { thoughtCut: stop.thought }
                : {
                    looped: stop.unit,
                    ...(stop.echoed ? { echoed: true } : {}),
                    streamedPieces: watch!.pieces(),
                  },
              { finishReason: "length" },
            );
            ctrl.enqueue(encoder.encode(opts.cutEnd));
            ctrl.close();
            hold.release();
            t.controller.abort(new Error("keel stopped a looping reply"));
            await reader.cancel().catch(() => undefined);
          }
        }
      } catch (err) {
        hold.release();
        ctrl.error(t.signal.aborted && t.signal.reason instanceof Error ? t.signal.reason : err);
      } finally {
        clearTimeout(timer);
        hold.watchIdle();
      }
    },
    cancel(reason) {
      hold.release();
      return reader.cancel(reason);
    },
  });
  hold.watchIdle();
  return new Response(stream, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/** Characters of new reply text between two looks for a loop. */
const LOOP_LOOK_EVERY = 256;

/** What one streamed line adds to a reply: prose (content, thinking) and call arguments. */
export interface StreamedText {
  prose: string;
  args: string;
  /** The part of `prose` that is thinking. */
  thinking?: string;
}

export const NOTHING_STREAMED: StreamedText = Object.freeze({ prose: "", args: "" });

/**
 * Reads a stream's reply text as its lines arrive; says what it repeats once it loops, or what it
 * copied once it copies keel's `instructions` (guard/echo.ts). The whole text is read for exact
 * repeats; the prose alone, also for a sentence under a changing counter (call arguments differ in
 * their numbers where nothing loops: seed data, generated rows).
 */
function loopWatch(
  generated: (line: string) => StreamedText,
  instructions?: string,
  thinkCut?: number,
) {
  let text = "";
  let prose = "";
  let thought = "";
  let answered = false;
  let looked = 0;
  let pieces = 0;
  const echoed = instructions ? echoWatch(instructions) : () => undefined;
  return {
    /**
     * The unit the reply so far loops on, or the start of what it copied (`echoed`), if either;
     * or, for a reply still thinking past `thinkCut` tokens, its thought so far. `lines`, what
     * arrived since the last look.
     */
    look: (
      lines: readonly string[],
    ): { unit: string; echoed?: true } | { thought: string } | undefined => {
      for (const l of lines) {
        const added = generated(l);
        if (added.prose || added.args) pieces++;
        text += added.prose + added.args;
        prose += added.prose;
        thought += added.thinking ?? "";
        if (added.args || added.prose.length > (added.thinking ?? "").length) answered = true;
      }
      if (thinkCut && !answered && estimateTokens(thought) >= thinkCut) return { thought };
      if (text.length - looked < LOOP_LOOK_EVERY) return undefined;
      looked = text.length;
      const copied = echoed(text);
      if (copied !== undefined) return { unit: copied, echoed: true };
      const unit = loopingTail(text, prose)?.unit;
      return unit === undefined ? undefined : { unit };
    },
    /** The events so far that added text. */
    pieces: () => pieces,
  };
}
