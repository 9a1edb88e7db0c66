/**
 * Rewinding a thread's conversation to an undone step: the thread forks at the checkpoint where the
 * step's call was about to run, that turn's calls are answered "undone", and the thread waits at
 * act. Resuming it (`keel run --thread ID`) continues from that point, with the model told what
 * was undone.
 */
import { ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { unansweredCalls } from "./conversation.js";
import type { createCoderGraph } from "./graph.js";
import { NODE } from "./routing.js";
import type { CoderStateValue } from "./state.js";
import type { StepRecord } from "../undo/journal.js";

type CompiledCoder = ReturnType<ReturnType<typeof createCoderGraph>["compile"]>;

export const UNDONE_NOTE =
  "[keel] The user undid this call with keel undo: the files it and every later call changed are back as they were before it. Continue from here, starting from the files as they are now.";

/** Forks the thread before `step`; false when its checkpoint is not in the store. */
export async function rewindTo(
  graph: CompiledCoder,
  thread: string,
  step: StepRecord,
): Promise<boolean> {
  for await (const snap of graph.getStateHistory({ configurable: { thread_id: thread } })) {
    const values = snap.values as Partial<CoderStateValue>;
    if (!snap.next.includes(NODE.toolExecute)) continue;
    if (!values.messages || (values.archived ?? 0) + values.messages.length !== step.messages)
      continue;
    const pending = unansweredCalls(values.messages);
    if (pending[0]?.id !== step.callId) continue;
    await graph.updateState(
      snap.config,
      new Command({
        update: {
          messages: pending.map(
            (c) =>
              new ToolMessage({
                content: UNDONE_NOTE,
                tool_call_id: c.id!,
                name: c.name,
                status: "error",
              }),
          ),
          status: "running",
        },
        goto: NODE.act,
      }),
      NODE.toolExecute,
    );
    return true;
  }
  return false;
}
