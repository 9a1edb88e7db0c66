/**
 * Filters a model's streamed text for people: reasoning is dropped (every dialect in the one
 * list, `REASONING_MARKERS`), answer framing such as harmony's final channel header is dropped, and
 * everything from the first tool-call marker on is held back, so raw call markup never reaches the
 * screen (the timeline shows the parsed call instead). Pure and incremental: text may arrive split
 * anywhere, markers included.
 */
import { MARKUP_OPENERS } from "../models/tool-calls/formats.js";
import {
  ANSWER_FRAMES,
  LONGEST_MARKER,
  REASONING_MARKERS,
} from "../models/tool-calls/reasoning.js";

/** Where tool-call markup of any supported family can begin: each format's openers. */
const CALL_MARKERS = MARKUP_OPENERS;
const CALL_PATTERNS = [
  /\{\s*"(name|tool|tool_name|function|arguments|parameters|tool_calls)"\s*:/,
  /(^|\n)\s*\[\s*[A-Za-z_][\w.-]*\(/,
  /(^|\s)call:[\w.-]+\{/,
];
/** Text this long at the end of the buffer may still become a marker. */
const HOLD = Math.max(24, LONGEST_MARKER);
/** Markers that are not calls and that text starting with a call opener may still become. */
const NOT_CALLS = [...REASONING_MARKERS.map((m) => m.open), ...ANSWER_FRAMES];

export interface StreamFilter {
  /** Adds streamed text; returns what may be shown now. */
  push(chunk: string): string;
  /** The message ended; returns the rest that may be shown. */
  end(): string;
}

type Event =
  | { at: number; kind: "think"; close: string; skip: number }
  | { at: number; kind: "frame"; skip: number }
  | { at: number; kind: "call" };

/** The first marker in `buffer`; at the same position reasoning and framing win over calls. */
function firstEvent(buffer: string): Event | undefined {
  let first: Event | undefined;
  const take = (e: Event) => {
    if (e.at >= 0 && (!first || e.at < first.at)) first = e;
  };
  for (const m of REASONING_MARKERS)
    take({ at: buffer.indexOf(m.open), kind: "think", close: m.close, skip: m.open.length });
  for (const f of ANSWER_FRAMES) take({ at: buffer.indexOf(f), kind: "frame", skip: f.length });
  for (const m of CALL_MARKERS) take({ at: buffer.indexOf(m), kind: "call" });
  for (const re of CALL_PATTERNS) take({ at: re.exec(buffer)?.index ?? -1, kind: "call" });
  return first;
}

export function createStreamFilter(): StreamFilter {
  let buffer = "";
  let closeThink: string | undefined;
  let suppressed = false;

  const drain = (final: boolean): string => {
    let out = "";
    for (;;) {
      if (suppressed) {
        buffer = "";
        return out;
      }
      if (closeThink) {
        const at = buffer.indexOf(closeThink);
        if (at < 0) {
          buffer = final ? "" : buffer.slice(-closeThink.length);
          return out;
        }
        buffer = buffer.slice(at + closeThink.length);
        closeThink = undefined;
        continue;
      }
      const e = firstEvent(buffer);
      if (!e) {
        const keep = final ? 0 : Math.min(HOLD, buffer.length);
        out += buffer.slice(0, buffer.length - keep);
        buffer = buffer.slice(buffer.length - keep);
        return out;
      }
      out += buffer.slice(0, e.at);
      buffer = buffer.slice(e.at);
      if (e.kind === "call") {
        // `<|` may still grow into reasoning (`<|channel|>analysis…`) or framing: wait for it.
        const rest = buffer;
        if (!final && NOT_CALLS.some((m) => m.length > rest.length && m.startsWith(rest)))
          return out;
        suppressed = true;
        continue;
      }
      buffer = buffer.slice(e.skip);
      if (e.kind === "think") closeThink = e.close;
    }
  };

  return {
    push: (chunk) => {
      buffer += chunk;
      return drain(false);
    },
    end: () => drain(true),
  };
}
