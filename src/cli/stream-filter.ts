/**
 * Filters a model's streamed text for people: thinking is dropped, and everything from the first
 * tool-call marker on is held back, so raw call markup never reaches the screen (the timeline shows
 * the parsed call instead). Pure and incremental: text may arrive split anywhere.
 */
import { MARKUP_OPENERS } from "../models/tool-calls/formats.js";

const THINK: Array<[string, string]> = [
  ["<think>", "</think>"],
  ["[THINK]", "[/THINK]"],
  ["◁think▷", "◁/think▷"],
];

/** Where tool-call markup of any supported family can begin: each format's openers. */
const CALL_MARKERS = MARKUP_OPENERS;
const CALL_PATTERNS = [
  /\{\s*"(name|tool|tool_name|function)"\s*:/,
  /(^|\n)\s*\[[A-Za-z_][\w.-]*\(/,
  /(^|\s)call:[\w.-]+\{/,
];
/** Text this long at the end of the buffer may still become a marker. */
const HOLD = 24;

export interface StreamFilter {
  /** Adds streamed text; returns what may be shown now. */
  push(chunk: string): string;
  /** The message ended; returns the rest that may be shown. */
  end(): string;
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
      let first = -1;
      let think: string | undefined;
      for (const [open, close] of THINK) {
        const at = buffer.indexOf(open);
        if (at >= 0 && (first < 0 || at < first)) [first, think] = [at, close];
      }
      for (const m of CALL_MARKERS) {
        const at = buffer.indexOf(m);
        if (at >= 0 && (first < 0 || at < first)) [first, think] = [at, undefined];
      }
      for (const re of CALL_PATTERNS) {
        const m = re.exec(buffer);
        if (m && (first < 0 || m.index < first)) [first, think] = [m.index, undefined];
      }
      if (first < 0) {
        const keep = final ? 0 : Math.min(HOLD, buffer.length);
        out += buffer.slice(0, buffer.length - keep);
        buffer = buffer.slice(buffer.length - keep);
        return out;
      }
      out += buffer.slice(0, first);
      if (think) {
        const open = THINK.find(([, c]) => c === think)![0];
        buffer = buffer.slice(first + open.length);
        closeThink = think;
      } else {
        suppressed = true;
      }
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
