/**
 * A worker's model servers: each unit goes to the least-busy server in rotation; a server that
 * fails is taken out until its retry time (doubling, up to a limit) and tried again then. Pure:
 * the clock is passed in.
 */
import type { ModelErrorKind } from "../models/errors.js";
import type { Provider } from "../models/provider.js";

/**
 * Failures that say the server, not the request, is the trouble: it leaves the rotation and the
 * unit goes to another. Any other (a bad request, a cut prompt, unparsable output) fails the unit.
 */
export const SERVER_DOWN_KINDS: readonly ModelErrorKind[] = [
  "unreachable",
  "overloaded",
  "dropped",
  "timeout",
  "server_error",
  "model_missing",
];

export interface ModelServer {
  url: string;
  provider: Provider;
}

interface Slot extends ModelServer {
  inFlight: number;
  /** Out of rotation until this time (ms); 0 = in rotation. */
  downUntil: number;
  /** Consecutive failures, for the back-off. */
  failures: number;
  lastError?: string;
}

/** Parses `--server` values: a URL whose path ends in /v1 is OpenAI-compatible, else `fallback`. */
export function parseServers(urls: string[], fallback: Provider): ModelServer[] {
  if (urls.length === 0) throw new Error("keel worker needs at least one --server URL");
  return urls.map((raw) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(`--server ${raw} is not a URL (e.g. http://gpu1:11434)`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:")
      throw new Error(`--server ${raw}: only http:// and https:// servers are supported`);
    const provider: Provider = /\/v1\/?$/.test(u.pathname) ? "openai" : fallback;
    return { url: raw.replace(/\/$/, ""), provider };
  });
}

export class ServerPool {
  private readonly slots: Slot[];
  constructor(
    servers: ModelServer[],
    private readonly backoff = { baseMs: 1000, maxMs: 30_000 },
  ) {
    this.slots = servers.map((s) => ({ ...s, inFlight: 0, downUntil: 0, failures: 0 }));
  }

  /** The server given out last: ties go to the next one after it, so idle servers take turns. */
  private last = -1;

  /** The least-busy server in rotation at `now` (ties in turn), taken; none when all are out. */
  take(now: number): ModelServer | undefined {
    let best = -1;
    for (let k = 1; k <= this.slots.length; k++) {
      const i = (this.last + k) % this.slots.length;
      const s = this.slots[i]!;
      if (s.downUntil <= now && (best < 0 || s.inFlight < this.slots[best]!.inFlight)) best = i;
    }
    if (best < 0) return undefined;
    this.last = best;
    const s = this.slots[best]!;
    s.inFlight++;
    return { url: s.url, provider: s.provider };
  }

  /** Gives a server back after a request; `ok` puts it fully back in rotation. */
  release(url: string, outcome: { ok: true } | { ok: false; error: string; now: number }): void {
    const s = this.slot(url);
    s.inFlight = Math.max(0, s.inFlight - 1);
    if (outcome.ok) {
      s.failures = 0;
      s.downUntil = 0;
      return;
    }
    s.failures++;
    s.lastError = outcome.error;
    s.downUntil =
      outcome.now + Math.min(this.backoff.maxMs, this.backoff.baseMs * 2 ** (s.failures - 1));
  }

  /** When the next server comes back (ms), or 0 when one is in rotation now. */
  nextUp(now: number): number {
    if (this.slots.some((s) => s.downUntil <= now)) return 0;
    return Math.min(...this.slots.map((s) => s.downUntil));
  }

  /** Each server's state, for the worker's log. */
  states(now: number) {
    return this.slots.map((s) => ({
      url: s.url,
      inFlight: s.inFlight,
      up: s.downUntil <= now,
      ...(s.lastError && s.downUntil > now ? { lastError: s.lastError } : {}),
    }));
  }

  private slot(url: string): Slot {
    const s = this.slots.find((x) => x.url === url);
    if (!s) throw new Error(`unknown server ${url}`);
    return s;
  }
}
