/**
 * The record that stands in for folded turns, pure. It has a fixed size: the newest folded
 * messages line by line, the older ones tallied per tool with what they worked on (so the model
 * still knows which files it has read). The tally extends the last turn's (see prefix.ts), so the
 * work per turn does not grow with the thread either.
 */
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { nativeOf } from "./prompt-form.js";
import { memo, prefixed } from "./prefix.js";

export const textOf = (m: BaseMessage) =>
  typeof m.content === "string" ? m.content : JSON.stringify(m.content);
const one = (s: string, n: number) => {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

/** The record's first line: how a record is recognised in a prompt. */
export const RECORD_HEADER =
  "[keel] Earlier turns were compacted to fit the context window. What happened in them:";

/** Where the record is in a prompt's messages; -1 when it has none. */
export const recordIndex = (messages: readonly BaseMessage[]) =>
  messages.findIndex((m) => typeof m.content === "string" && m.content.startsWith(RECORD_HEADER));

/** Estimated tokens of one record line (they are cut at about 130 characters). */
const LINE_TOKENS = 40;

/**
 * The record's shape for a budget: how many folded messages it spells out, and how many characters
 * it gives to naming what the older ones worked on.
 */
const shapeOf = (budget: number) => ({
  lines: Math.max(6, Math.min(24, Math.floor(budget / 20 / LINE_TOKENS))),
  targetChars: Math.floor((budget / 24) * 3.5),
});

/** The most tokens a record takes under `budget`: what folding must leave room for. */
export function recordTokens(budget: number): number {
  const shape = shapeOf(budget);
  return (shape.lines + 2) * LINE_TOKENS + Math.ceil(shape.targetChars / 3.5);
}

/** One line of the record. Prompt-mode messages are described by the message they were made from. */
const lineOf = memo((shown) => {
  const m = nativeOf(shown);
  if (AIMessage.isInstance(m) && m.tool_calls?.length)
    return `- you called ${m.tool_calls.map((c) => `${c.name}(${one(JSON.stringify(c.args), 80)})`).join(", ")}`;
  if (ToolMessage.isInstance(m))
    return `  → ${m.status === "error" ? "error" : "ok"}: ${one(textOf(m), 100)}`;
  if (AIMessage.isInstance(m)) return `- you said: ${one(textOf(m), 120)}`;
  const text = textOf(m);
  return `- ${text.startsWith("[keel]") ? "keel" : "user"}: ${one(text.replace(/^\[keel\]\s*/, ""), 120)}`;
});

/** A message's tool calls as the tally counts them: the tool, and its path, pattern or command. */
const callsOf = memo((shown) => {
  const m = nativeOf(shown);
  return (AIMessage.isInstance(m) ? (m.tool_calls ?? []) : []).map((c) => {
    const t: unknown = c.args.path ?? c.args.pattern ?? c.args.command;
    return { name: c.name, target: typeof t === "string" ? one(t, 60) : undefined };
  });
});
const failed = memo((shown) => {
  const m = nativeOf(shown);
  return ToolMessage.isInstance(m) && m.status === "error";
});

/** Calls per tool with the targets named while they fit in the record's characters; never mutated once kept. */
interface Tally {
  tools: Map<string, { calls: number; targets: Set<string>; unnamed: number }>;
  errors: number;
  left: number;
}

/**
 * The record's account of messages no longer in the conversation (moved to the thread's archive:
 * archive.ts), as kept in state: how many there were and their tally, so that the record reads as
 * it did while they were there.
 */
export interface Carried {
  /** Messages moved out, not counting the pinned ones (which stay). */
  messages: number;
  /** Per tool: name, calls, the targets named, calls whose target did not fit. */
  tools: Array<[string, number, string[], number]>;
  errors: number;
  /** Characters left for naming targets. */
  left: number;
}

const tallyFrom = (c: Carried): Tally => ({
  tools: new Map(
    c.tools.map(([name, calls, targets, unnamed]) => [
      name,
      { calls, targets: new Set(targets), unnamed },
    ]),
  ),
  errors: c.errors,
  left: c.left,
});

function extend(t: Tally, m: BaseMessage): void {
  if (failed(m)) t.errors++;
  for (const { name, target } of callsOf(m)) {
    const entry = t.tools.get(name) ?? { calls: 0, targets: new Set<string>(), unnamed: 0 };
    t.tools.set(name, entry);
    entry.calls++;
    if (target === undefined || entry.targets.has(target)) continue;
    if (target.length + 2 <= t.left) {
      entry.targets.add(target);
      t.left -= target.length + 2;
    } else entry.unnamed++;
  }
}

/**
 * The tally of `messages[0..end)` under a character allowance for targets, after what `carried`
 * accounts for (its allowance, once there is one).
 */
const tallyOf = prefixed<Tally, Carried>(
  (chars, carried) => (carried ? tallyFrom(carried) : { tools: new Map(), errors: 0, left: chars }),
  (t) => ({
    tools: new Map([...t.tools].map(([k, v]) => [k, { ...v, targets: new Set(v.targets) }])),
    errors: t.errors,
    left: t.left,
  }),
  extend,
);

function describe(t: Tally): string {
  const parts = [...t.tools].map(([name, e]) => {
    const named =
      compactedTargets([...e.targets]) + (e.unnamed ? `, and ${e.unnamed} more calls` : "");
    return `${name} ×${e.calls}${named ? ` (${named})` : ""}`;
  });
  return [...parts, ...(t.errors ? [`${t.errors} failed`] : [])].join("; ");
}

/**
 * Targets named in fewer tokens, in the order first seen: a run of three or more names that differ
 * only by consecutive numbers as one range (`notes/n{0..67}.txt`), then names in one folder as one
 * group (`src/coder/{graph.ts,state.ts}`). Both are shell brace forms, which models read.
 */
export function compactTargets(targets: readonly string[]): string[] {
  // 1. Numbered runs: names alike but for their last number (up to 15 digits, no leading zero),
  // three or more consecutive.
  const numbered = (t: string) => {
    const m = /^([^{]*?)(0|[1-9]\d{0,14})(\D*)$/.exec(t);
    return m ? { frame: `${m[1]}{}${m[3]}`, head: m[1]!, n: Number(m[2]), tail: m[3]! } : undefined;
  };
  const frames = new Map<string, { head: string; tail: string; ns: Set<number> }>();
  for (const t of targets) {
    const f = numbered(t);
    if (!f) continue;
    const frame = frames.get(f.frame) ?? { head: f.head, tail: f.tail, ns: new Set<number>() };
    frame.ns.add(f.n);
    frames.set(f.frame, frame);
  }
  /** Frame → number → the range it is in, for numbers in a run of three or more. */
  const ranges = new Map<string, Map<number, string>>();
  for (const [key, { head, tail, ns }] of frames) {
    const sorted = [...ns].sort((a, b) => a - b);
    const of = new Map<number, string>();
    for (let i = 0; i < sorted.length;) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
      if (j - i >= 2)
        for (let k = i; k <= j; k++)
          of.set(sorted[k]!, `${head}{${sorted[i]}..${sorted[j]}}${tail}`);
      i = j + 1;
    }
    ranges.set(key, of);
  }
  const ranged = (t: string) => {
    const f = numbered(t);
    return (f && ranges.get(f.frame)!.get(f.n)) ?? t;
  };
  const items = [...new Set(targets.map(ranged))];
  // 2. Paths in one folder: grouped, where two or more share it, at the first one's place.
  const folderOf = (t: string) =>
    /^[\w.@+-]+(?:\/[\w.@+-]+)*\/[\w.@+-]+$/.test(t) ? t.slice(0, t.lastIndexOf("/")) : undefined;
  const groups = new Map<string, { folder?: string; names: string[] }>();
  for (const t of items) {
    const folder = folderOf(t);
    const key = folder === undefined ? `item:${t}` : `folder:${folder}`;
    const group = groups.get(key) ?? { ...(folder !== undefined ? { folder } : {}), names: [] };
    groups.set(key, group);
    group.names.push(t);
  }
  return [...groups.values()].map(({ folder, names }) =>
    names.length < 2
      ? names[0]!
      : `${folder}/{${names.map((n) => n.slice(folder!.length + 1)).join(",")}}`,
  );
}

/**
 * `compactTargets` joined, for the last few target lists: the record is rebuilt every turn from the
 * same targets until the next fold, and compacting them each time cost 0.4 ms a turn.
 */
const compacted = new Map<string, string>();
function compactedTargets(targets: readonly string[]): string {
  const key = targets.join("\n");
  let text = compacted.get(key);
  if (text === undefined) {
    text = compactTargets(targets).join(", ");
    if (compacted.size >= 8) compacted.delete(compacted.keys().next().value!);
    compacted.set(key, text);
  }
  return text;
}

/**
 * The record of `history[0..end)` without the `pinned` messages (the request and the plan, which
 * stay): a tally of the older messages, then a line for each of the newest ones, starting at a call
 * rather than at its result. Undefined when there is nothing to fold.
 */
export function foldRecord(
  history: readonly BaseMessage[],
  end: number,
  pinned: readonly number[],
  budget: number,
  carried?: Carried,
): string | undefined {
  const before = (i: number) => pinned.filter((p) => p < i).length;
  const moved = carried?.messages ?? 0;
  if (end - before(end) + moved <= 0) return undefined;
  const shape = shapeOf(budget);
  const from = linesFrom(history, end, pinned, shape.lines);
  // Pinned messages contribute nothing to a tally (no calls), so the tally's prefix may include them.
  const older = from - before(from) + moved;
  const tally = older > 0 ? describe(tallyOf(history, from, shape.targetChars, carried)) : "";
  const skip = new Set(pinned);
  const lines: string[] = [];
  for (let i = from; i < end; i++) if (!skip.has(i)) lines.push(lineOf(history[i]!));
  return [
    RECORD_HEADER,
    ...(older > 0 ? [`- ${older} earlier messages${tally ? `; calls: ${tally}` : ""}`] : []),
    ...lines,
  ].join("\n");
}

/** The most lines a record spells out (`shapeOf`): the folded messages the conversation keeps. */
export const MAX_LINES = 24;

/**
 * Where the record's lines start for a fold at `end`: `lines` messages back that are not pinned,
 * then on to a call rather than its result.
 */
function linesFrom(
  history: readonly BaseMessage[],
  end: number,
  pinned: readonly number[],
  lines: number,
): number {
  const skip = new Set(pinned);
  let from = end;
  for (let shown = 0; from > 0 && shown < lines; from--) if (!skip.has(from - 1)) shown++;
  while (from < end && (skip.has(from) || ToolMessage.isInstance(nativeOf(history[from]!)))) from++;
  return from;
}

/**
 * What may leave the conversation after a fold at `end`: the messages before the record's lines at
 * their longest (`MAX_LINES`), whatever the window, so the record reads the same without them; and
 * the account that replaces them (`Carried`), for the target allowance of `budget`. Undefined when
 * fewer than `least` messages could.
 */
export function carryUpTo(
  history: readonly BaseMessage[],
  end: number,
  pinned: readonly number[],
  budget: number,
  carried?: Carried,
  least = 1,
): { cut: number; carried: Carried } | undefined {
  const cut = linesFrom(history, end, pinned, MAX_LINES);
  const moving = cut - pinned.filter((p) => p < cut).length;
  if (moving < Math.max(1, least)) return undefined;
  const t = tallyOf(history, cut, shapeOf(budget).targetChars, carried);
  return {
    cut,
    carried: {
      messages: (carried?.messages ?? 0) + moving,
      tools: [...t.tools].map(([name, e]) => [name, e.calls, [...e.targets], e.unnamed]),
      errors: t.errors,
      left: t.left,
    },
  };
}
