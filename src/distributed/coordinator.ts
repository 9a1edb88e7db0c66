/** What `keel analyze --postgres URL --workers` adds to a run: the queue and the units step that uses it. */
import type { AnalystGraphOptions } from "../analysis/graph.js";
import { createDispatchUnitsNode } from "./dispatch-units.js";
import { openQueue, type UnitQueue } from "./queue.js";
import { runStatuses, type RunStatus } from "./status.js";

export interface DistributedOptions {
  /** A worker's hold on a unit, seconds: longer than the slowest unit takes (default 900). */
  leaseSeconds?: number;
  pollMs?: number;
  /** Units on the queue ahead of the completions (default 1000). */
  window?: number;
}

export const DEFAULT_LEASE_SECONDS = 900;

/**
 * Opens the queue on the run's Postgres database and gives the graph option that puts it between
 * the analyst and the workers. This process also runs pg-boss's maintenance often enough that a
 * dead worker's lease expires within about half a lease of its end.
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

/** `keel analyze --status`: every run on the queue (or one), from the database's own clock. */
export async function queueStatus(url: string, run?: string): Promise<RunStatus[]> {
  const queue = await openQueue(url);
  try {
    return runStatuses(await queue.census(run), await queue.dbNow());
  } finally {
    await queue.close();
  }
}
