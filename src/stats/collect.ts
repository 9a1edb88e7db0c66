/**
 * Reading every coder run out of a checkpoint store (SQLite, Postgres, memory). A thread holds one
 * run per request: each run starts at an "input" checkpoint, so a run ends at the parent of the next
 * run's input, and the thread's newest checkpoint ends its last run. Only those checkpoints are
 * loaded into state.
 */
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph";
import { createCoderGraph } from "../coder/graph.js";
import { UNDONE_NOTE } from "../coder/rewind.js";
import type { CoderStateValue } from "../coder/state.js";
import { runRecord, type RunRecord } from "../coder/learning/run-record.js";

export async function collectRuns(
  checkpointer: BaseCheckpointSaver,
  onlyThread?: string,
): Promise<RunRecord[]> {
  const threads = new Map<string, CheckpointTuple[]>();
  const config = onlyThread ? { configurable: { thread_id: onlyThread } } : {};
  for await (const t of checkpointer.list(config)) {
    if (t.config.configurable?.checkpoint_ns) continue; // subgraphs
    const id = String(t.config.configurable?.thread_id ?? "");
    threads.set(id, [...(threads.get(id) ?? []), t]);
  }
  const graph = createCoderGraph().compile({ checkpointer });
  const runs: RunRecord[] = [];
  for (const [thread, tuples] of threads) {
    for (const end of runEnds(tuples)) {
      const snap = await graph.getState(end.config);
      const run = runRecord(thread, end.checkpoint.ts, snap.values as Partial<CoderStateValue>);
      if (!run) continue;
      const failed = snap.tasks.find((t) => t.error !== undefined);
      if (run.status === "running" && failed)
        runs.push({ ...run, status: "stopped", error: errorText(failed.error) });
      else if (run.status === "running" && rewound(snap.values as Partial<CoderStateValue>))
        runs.push({ ...run, status: "undone" });
      else runs.push(run);
    }
  }
  return runs.sort((a, b) => a.at.localeCompare(b.at) || a.thread.localeCompare(b.thread));
}

/** Whether a thread waits where `keel undo` rewound it: its last message is the undone note. */
const rewound = (values: Partial<CoderStateValue>) => {
  const last = values.messages?.at(-1);
  return last?.getType() === "tool" && last.content === UNDONE_NOTE;
};

const errorText = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e);

/** The checkpoints that end a run: parents of "input" checkpoints, and the newest. */
export function runEnds(tuples: readonly CheckpointTuple[]): CheckpointTuple[] {
  const byId = new Map(tuples.map((t) => [t.checkpoint.id, t]));
  const ends = new Set<CheckpointTuple>();
  const newest = [...tuples].sort((a, b) => b.checkpoint.id.localeCompare(a.checkpoint.id))[0];
  if (newest) ends.add(newest);
  for (const t of tuples) {
    if (t.metadata?.source !== "input") continue;
    const parent = byId.get(String(t.parentConfig?.configurable?.checkpoint_id ?? ""));
    if (parent) ends.add(parent);
  }
  return [...ends];
}
