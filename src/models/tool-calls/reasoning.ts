/**
 * The one list of reasoning markers: how each model family writes its thinking into the reply
 * text. The tool-call parser blanks reasoning out (a call inside it is not an action), the CLI's
 * stream filter hides it, and the history drops it from answers and summaries. Learnt from the
 * families' chat templates and model cards (llama.cpp's reasoning formats list most of them).
 */

export interface ReasoningMarker {
  /** Who writes it, for docs and tests. */
  dialect: string;
  open: string;
  close: string;
  /**
   * The chat template may put `open` in the prompt, so the reply holds only `close`: text before a
   * lone `close` is reasoning.
   */
  promptOpens?: boolean;
}

export const REASONING_MARKERS: readonly ReasoningMarker[] = [
  // Qwen3, DeepSeek-R1 and its distills, GLM-4.5, MiniMax, Kimi K2 Thinking, Nemotron, SmolLM3,
  // Phi-4-reasoning, Granite, ExaOne, Hunyuan, OLMo 3 Think.
  { dialect: "think", open: "<think>", close: "</think>", promptOpens: true },
  { dialect: "thinking", open: "<thinking>", close: "</thinking>", promptOpens: true },
  { dialect: "magistral", open: "[THINK]", close: "[/THINK]" },
  { dialect: "kimi", open: "◁think▷", close: "◁/think▷" },
  { dialect: "seed", open: "<seed:think>", close: "</seed:think>", promptOpens: true },
  { dialect: "harmony", open: "<|channel|>analysis<|message|>", close: "<|end|>" },
  { dialect: "gemma4", open: "<|channel>thought", close: "<channel|>" },
  { dialect: "command", open: "<|START_THINKING|>", close: "<|END_THINKING|>", promptOpens: true },
  { dialect: "apertus", open: "<|inner_prefix|>", close: "<|inner_suffix|>", promptOpens: true },
  { dialect: "solar", open: "<|think|>", close: "<|end|><|begin|>assistant<|content|>" },
];

/**
 * Framing around answer text that is neither reasoning nor a call (harmony's final channel,
 * Command's response span): dropped, the text inside kept.
 */
export const ANSWER_FRAMES: readonly string[] = [
  "<|start|>assistant<|channel|>final<|message|>",
  "<|channel|>final<|message|>",
  "<|return|>",
  "<|end|>",
  "<|START_RESPONSE|>",
  "<|END_RESPONSE|>",
];

/** The longest marker: a stream must hold back this much, less one, to see any marker whole. */
export const LONGEST_MARKER = Math.max(
  ...REASONING_MARKERS.flatMap((m) => [m.open.length, m.close.length]),
  ...ANSWER_FRAMES.map((f) => f.length),
);

/**
 * `text.indexOf` that remembers each needle's last answer: asked again from a later point before
 * that answer, it answers without a scan, so a text is scanned about once per needle however many
 * spans it has (a reply of a thousand `<think></think>` pairs is not read a thousand times).
 */
function searcher(text: string): (needle: string, from: number) => number {
  const last = new Map<string, { from: number; at: number }>();
  return (needle, from) => {
    const l = last.get(needle);
    if (l && from >= l.from && (l.at < 0 || from <= l.at)) return l.at;
    const at = text.indexOf(needle, from);
    last.set(needle, { from, at });
    return at;
  };
}

/** Where the first of `openers` appears from `from` on (-1: none). */
function firstOf(
  find: (needle: string, from: number) => number,
  openers: readonly string[],
  from: number,
): number {
  let first = -1;
  for (const o of openers) {
    const i = find(o, from);
    if (i >= 0 && (first < 0 || i < first)) first = i;
  }
  return first;
}

/**
 * The reasoning spans of `text`, in order: [start, end) each, an unclosed one running to the end.
 *
 * With `callOpeners` (how tool-call markup opens), reasoning comes before the calls: a marker after
 * the first call's opener is text inside the call (a file that splits on `</think>`), not
 * reasoning; and a lone close marker after an opener counts only on a line of its own, as
 * templates write it, or when a call opens after it (thinking that mentioned the markup, then the
 * call): inside a JSON string a line cannot begin.
 */
export function reasoningSpans(
  text: string,
  callOpeners: readonly string[] = [],
): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let at = 0;
  const find = searcher(text);
  const opener = firstOf(find, callOpeners, 0);
  // A lone close marker before any open one: the prompt opened the reasoning.
  let lone: [number, number] | undefined;
  for (const m of REASONING_MARKERS) {
    if (!m.promptOpens) continue;
    const close = find(m.close, 0);
    if (close < 0) continue;
    const end = close + m.close.length;
    const ownLine = /(^|\n)[ \t]*$/.test(text.slice(Math.max(0, close - 80), close));
    if (opener >= 0 && opener < close && !ownLine && firstOf(find, callOpeners, end) < 0) continue;
    const open = find(m.open, 0);
    if ((open < 0 || open > close) && (!lone || end < lone[1])) lone = [0, end];
  }
  if (lone) {
    spans.push(lone);
    at = lone[1];
  }
  for (;;) {
    let first = -1;
    let marker: ReasoningMarker | undefined;
    for (const m of REASONING_MARKERS) {
      const i = find(m.open, at);
      if (i >= 0 && (first < 0 || i < first)) [first, marker] = [i, m];
    }
    if (!marker) return spans;
    const call = firstOf(find, callOpeners, at);
    if (call >= 0 && call < first) return spans;
    const close = find(marker.close, first + marker.open.length);
    const end = close < 0 ? text.length : close + marker.close.length;
    spans.push([first, end]);
    at = end;
  }
}

/**
 * `text` with its reasoning blanked out by spaces, so offsets into it stay valid (`callOpeners`: see
 * `reasoningSpans`).
 */
export function maskReasoning(text: string, callOpeners: readonly string[] = []): string {
  const spans = reasoningSpans(text, callOpeners);
  if (spans.length === 0) return text;
  let out = "";
  let at = 0;
  for (const [s, e] of spans) {
    out += text.slice(at, s) + " ".repeat(e - s);
    at = e;
  }
  return out + text.slice(at);
}

/** `text` without its reasoning and answer framing: what a person reads as the answer. */
export function stripReasoning(text: string): string {
  let out = "";
  let at = 0;
  for (const [s, e] of reasoningSpans(text)) {
    out += text.slice(at, s);
    at = e;
  }
  out += text.slice(at);
  for (const f of ANSWER_FRAMES) if (out.includes(f)) out = out.split(f).join("");
  return out;
}
