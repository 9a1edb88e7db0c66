/** What `keel analyze --postgres URL --workers` adds to a run: the queue and the units step that uses it. */
import type { AnalystGraphOptions } from "../analyst/graph.js";
import { createDispatchUnitsNode } from "./dispatch-units.js";
import { openQueue, type UnitQueue } from "./queue.js";
import type { WorkerRow } from "./queue.js";
import { runStatuses, type RunStatus } from "./status.js";

export interface DistributedOptions {
  /**
   * The last resort, seconds: how long a job may stay with a worker whose session lives but who
   * neither finishes nor renews it (default 900). A dead worker's units return within seconds.
   */
  leaseSeconds?: number;
  pollMs?: number;
  /** Units on the queue ahead of the completions (default 1000). */
  window?: number;
}

export const DEFAULT_LEASE_SECONDS = 900;

/**
 * Opens the queue on the run's Postgres database and gives the graph option that puts it between
 * the analyst and the workers. The units step sweeps the queue for dead workers' jobs every few
 * seconds; this process also runs pg-boss's maintenance, which ends a lease that nobody renewed.
 */
export async function openDistributed(
  url: string,
  o: DistributedOptions = {},
): Promise<{ queue: UnitQueue; graph: Pick<AnalystGraphOptions, "unitsNode"> }> {
  const leaseSeconds = o.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
  const queue = await openQueue(url, {
    maintenanceSeconds: Math.max(1, Math.min(30, Math.floor(leaseSeconds / 2))),
  });
  return {
    queue,
    graph: {
      unitsNode: (deps) =>
        createDispatchUnitsNode(deps, {
          queue,
          leaseSeconds,
          ...(o.pollMs ? { pollMs: o.pollMs } : {}),
          ...(o.window ? { window: o.window } : {}),
        }),
    },
  };
}

/** `keel analyze --status`: every run on the queue (or one) and the workers, from the database's clock. */
export async function queueStatus(
  url: string,
  run?: string,
): Promise<{ runs: RunStatus[]; workers: WorkerRow[]; now: number }> {
  const queue = await openQueue(url);
  try {
    const now = await queue.dbNow();
    return {
      runs: runStatuses(await queue.census(run), now),
      workers: await queue.workers(),
      now,
    };
  } finally {
    await queue.close();
  }
}
