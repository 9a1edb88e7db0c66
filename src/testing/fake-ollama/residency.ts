/**
 * How long the fake Ollama keeps a model loaded, as Ollama does: after each request the model
 * stays for the request's `keep_alive` (a Go duration such as "5m", or seconds; negative: for
 * ever; 0: unloaded at once), else the server's OLLAMA_KEEP_ALIVE (5 minutes by default).
 * `/api/ps` lists it with `expires_at` until then; a request after that loads it again, with an
 * empty KV cache and a `load_duration` to show for it.
 */

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A keep_alive value in ms (Infinity: for ever); undefined when it is not one. */
export function keepAliveMs(value: unknown): number | undefined {
  if (typeof value === "number") return value < 0 ? Infinity : value * 1000;
  if (typeof value !== "string" || !value.trim()) return undefined;
  const text = value.trim();
  if (/^-/.test(text)) return Infinity;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  let ms = 0;
  let rest = text;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    ms += Number(m[1]) * UNITS[m[2]!]!;
    rest = rest.replace(m[0], "");
  }
  return rest === "" ? ms : undefined;
}

/** The one model a fake keeps loaded (OLLAMA_MAX_LOADED_MODELS=1), and until when. */
export class Residency {
  private model: string | undefined;
  private until = 0;

  constructor(private readonly defaultMs: number) {}

  /** Whether `model` is loaded now; a model whose time ran out is unloaded first (`onUnload`). */
  loaded(model: string, onUnload: () => void): boolean {
    if (this.model !== undefined && Date.now() >= this.until) {
      this.model = undefined;
      onUnload();
    }
    return this.model === model;
  }

  /** A request to `model` finished: it stays for its keep_alive, else the server's. */
  served(model: string, keepAlive: unknown): void {
    this.model = model;
    this.until = Date.now() + (keepAliveMs(keepAlive) ?? this.defaultMs);
  }

  /** `/api/ps`: the loaded model and when it expires, if one is. */
  running(): { model: string; expiresAt: Date } | undefined {
    if (this.model === undefined || Date.now() >= this.until) return undefined;
    const at = Number.isFinite(this.until) ? this.until : Date.UTC(2318, 0, 1);
    return { model: this.model, expiresAt: new Date(at) };
  }
}
