/**
 * The record of one coder run, pure: read from the state the run left in its checkpoints (the
 * tally of its tool calls, the ladder's rung, the turns' usage). Nothing here is new data: it is
 * what the run already persisted. The ledger tallies it, keel stats and keel eval count it.
 */
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { Rung } from "../../guard/ladder.js";
import { callRecords, loopsCut, tallyOfTrail, type CallRecord } from "../call-tally.js";
import type { CoderStateValue, CoderStatus } from "../state.js";
import { addSums, metaOf, NO_TURNS, sumTurns } from "../turn-sums.js";

export interface RunRecord {
  thread: string;
  /** When the run's last checkpoint was written (ISO). */
  at: string;
  model: string;
  request: string;
  intent: string | null;
  /**
   * The run's status; "stopped" when it ended on an error (the model server down, a crash) and was
   * not resumed: its state still says "running" and the failed step is pending (see `error`);
   * "undone" when `keel undo` rewound it to before an undone step, where it waits to be resumed.
   */
  status: CoderStatus | "stopped" | "undone";
  /** The error a stopped run ended on. */
  error?: string;
  turns: number;
  calls: CallRecord[];
  /** Turns whose calls were salvaged from text on the native channel. */
  salvaged: number;
  loopsCut: number;
  rung: Rung;
  promptTokens: number;
  generatedTokens: number;
  /** Generation speed averaged over the turns that reported it. */
  tokensPerSecond?: number;
}

/** The run a state holds (its latest request), or undefined for a state that is not a coder run. */
export function runRecord(
  thread: string,
  at: string,
  values: Partial<CoderStateValue>,
): RunRecord | undefined {
  if (!Array.isArray(values.trail) || !Array.isArray(values.messages)) return undefined;
  // A thread from before the tally kept its run's whole trail.
  const tally =
    values.callTally && Object.keys(values.callTally).length
      ? values.callTally
      : tallyOfTrail(values.trail);
  // A run that failed before intent-classify has only its request message.
  const request = values.request || newestRequest(values.messages);
  if (!request) return undefined;
  const turns = runTurns(values.messages, request);
  // The run's turns moved out of the conversation count as well (history/archive.ts).
  const sums = addSums(sumTurns(turns), values.movedTurns ?? NO_TURNS);
  const model =
    turns.map((m) => metaOf(m).keel_turn?.model).find((m): m is string => Boolean(m)) ??
    values.fit?.model ??
    "unknown";
  return {
    thread,
    at,
    model,
    request,
    intent: values.intent?.intent ?? null,
    status: values.status ?? "running",
    turns: values.turns ?? sums.turns,
    calls: callRecords(tally),
    salvaged: sums.salvaged,
    loopsCut: loopsCut(tally),
    rung: values.rung ?? "none",
    promptTokens: sums.promptTokens,
    generatedTokens: sums.generatedTokens,
    ...(sums.speeds ? { tokensPerSecond: sums.speedSum / sums.speeds } : {}),
  };
}

/** The newest person's message (keel's own notes are named "keel"). */
function newestRequest(messages: readonly BaseMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (HumanMessage.isInstance(m) && m.name !== "keel" && typeof m.content === "string")
      return m.content;
  }
  return undefined;
}

/** The AI messages after the newest human message holding the request. */
function runTurns(messages: readonly BaseMessage[], request: string): AIMessage[] {
  let from = messages.length;
  while (from > 0) {
    const m = messages[from - 1]!;
    if (HumanMessage.isInstance(m) && m.content === request) break;
    from--;
  }
  return messages.slice(from).filter((m): m is AIMessage => AIMessage.isInstance(m));
}
