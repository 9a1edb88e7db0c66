/**
 * The side-effect journal: commands run at most once per tool call, even across a crash. Before a
 * command runs, its call is marked started in the store; after, its result is recorded. A resumed
 * run finds the call done (and reuses the result) or started-but-unfinished (and does not run it
 * again, saying so). Checkpoints alone cannot close that window: a process can die after the
 * command ran and before the step's checkpoint was written.
 */
import type { BaseStore } from "@langchain/langgraph";
import type { ToolResult } from "../tools/types.js";

export type JournalEntry =
  | { state: "started"; at: number; pid?: number }
  | { state: "done"; at: number; result: ToolResult };

export class CallJournal {
  private readonly ns: string[];
  private readonly store: BaseStore;
  constructor(store: BaseStore, threadId: string) {
    this.ns = ["keel", "journal", threadId];
    // The store a node is given queues writes for a timer that stops with the run: a record made
    // as the run is stopped would never land. The store under it writes when called (SQLite).
    const batched = store as BaseStore & { lg_name?: string; store?: BaseStore };
    this.store = batched.lg_name === "AsyncBatchedStore" && batched.store ? batched.store : store;
  }
  async get(callId: string): Promise<JournalEntry | undefined> {
    return (await this.store.get(this.ns, callId))?.value as JournalEntry | undefined;
  }
  async start(callId: string): Promise<void> {
    await this.store.put(this.ns, callId, { state: "started", at: Date.now() });
  }
  /** Records the process group a started command runs in. */
  async spawned(callId: string, pid: number): Promise<void> {
    await this.store.put(this.ns, callId, { state: "started", at: Date.now(), pid });
  }
  /** Forgets a call that never ran (it stopped to ask for approval). */
  async clear(callId: string): Promise<void> {
    await this.store.delete(this.ns, callId);
  }
  async finish(callId: string, result: ToolResult): Promise<void> {
    await this.store.put(this.ns, callId, { state: "done", at: Date.now(), result });
  }
}

const alive = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A command outlives the keel process that started it (it runs in its own process group). Before
 * a resumed run tells the model to check the command's effect, that effect must be final: wait for
 * the orphaned group to end, at most until the command's own time limit, then stop it. A group
 * recorded longer ago than the limit is left alone (its id may belong to someone else by now).
 */
export async function settleOrphan(
  entry: { at: number; pid?: number },
  timeoutMs: number,
  pollMs = 50,
): Promise<"none" | "ended" | "stopped"> {
  if (!entry.pid || Date.now() - entry.at > timeoutMs || !alive(entry.pid)) return "none";
  while (alive(entry.pid)) {
    if (Date.now() - entry.at > timeoutMs) {
      try {
        process.kill(-entry.pid, "SIGKILL");
      } catch {
        // ended meanwhile
      }
      return "stopped";
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return "ended";
}

/**
 * What the model is told about a command whose result keel never recorded: keel stopped while it
 * ran (a crash, a kill) and did not see it end.
 */
export const INTERRUPTED_CALL =
  "this command was started before keel stopped without recording its result (a crash or a kill), so it may have run fully, partly or not at all; keel did not run it again. Check its effect (list or read the files it touches) before deciding to run it again.";
