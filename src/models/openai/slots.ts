/**
 * A multi-slot llama-server (4 slots by default): each request runs in one slot, and where the
 * server splits its context between them (`-np 4 -c 4096`: 1,024 tokens each) the slot's context
 * is the request's real window — keel must not assume one slot. Pure.
 */

/** What the server says of its slots: `/props` and, where it is on, `/slots`. */
export interface SlotFacts {
  /** `/props` top-level `n_ctx`, where the server gives one (the whole context). */
  nCtx?: number;
  /** `/props` `default_generation_settings.n_ctx`: a slot's context. */
  slotCtx?: number;
  /** `/props` `total_slots`. */
  totalSlots?: number;
  /** `/slots`: each slot's `n_ctx`. */
  slots?: number[];
}

/**
 * The context one request can use: the smallest slot's as `/slots` lists them, else a slot's as
 * `/props` describes it, else the whole context shared out between the slots (the server splits
 * it unless told otherwise); undefined when the server says nothing.
 */
export function slotWindow(f: SlotFacts): number | undefined {
  const listed = (f.slots ?? []).filter((n) => n > 0);
  if (listed.length) return Math.min(...listed);
  if (f.slotCtx) return f.slotCtx;
  if (f.nCtx) return Math.floor(f.nCtx / Math.max(1, f.totalSlots ?? 1));
  return undefined;
}
