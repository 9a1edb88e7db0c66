/**
 * `keel worker`: takes the analyst's units from the job queue on a Postgres database and analyses
 * them against its model servers, until stopped (SIGINT/SIGTERM: the units in hand finish, then it
 * leaves; a second signal stops at once and its units go back to the queue). And
 * `keel analyze --status`.
 */
import { hostname } from "node:os";
import { Command, Option } from "commander";
import { openQueue } from "../distributed/queue.js";
import { queueStatus } from "../distributed/coordinator.js";
import { parseServers } from "../distributed/pool.js";
import { formatStatusLine, formatWorker } from "../distributed/status.js";
import { runWorker } from "../distributed/worker.js";
import { WorkerSession } from "../distributed/worker-session.js";
import { openPersistence } from "../persistence/open.js";
import { PROVIDERS, type Provider } from "../models/provider.js";
import { AnalystContextSchema } from "../analyst/context.js";
import { collect, positiveInt } from "./options.js";
import { addSettingFlags, flagSettings } from "./setting-flags.js";
import { UsageError } from "../session/session.js";

/**
 * Prints the queue's runs (done, in flight, queued, failed, per worker, units/s, ETA) and the
 * health of the workers seen in the last day (alive, stopped or gone; last seen; units; failures;
 * servers).
 */
export async function analyzeStatus(url: string | undefined, json?: boolean): Promise<void> {
  if (!url) throw new UsageError("--status needs --postgres URL: the database whose queue to show");
  const { runs, workers, now } = await queueStatus(url);
  if (json) return void process.stdout.write(`${JSON.stringify({ runs, workers })}\n`);
  const lines = runs.length
    ? runs.map((s) => `run ${s.run}: ${formatStatusLine(s, workers)}`)
    : ["no analysis runs on this queue"];
  if (workers.length) lines.push("workers:", ...workers.map((w) => `  ${formatWorker(w, now)}`));
  process.stdout.write(`${lines.join("\n")}\n`);
}

interface WorkerFlags {
  postgres?: string;
  server: string[];
  model?: string;
  provider?: Provider;
  concurrency?: number;
  name?: string;
  pollMs?: number;
  json?: boolean;
}

/** The `keel worker` command. */
export function workerCommand(): Command {
  const worker = new Command("worker")
    .description(
      "Analyse units of `keel analyze --workers` runs from the job queue on a Postgres database, against one or more model servers (start as many as you like, on any machine)",
    )
    .option("--postgres <url>", "the database of the runs (their queue and findings)")
    .option(
      "--server <url>",
      "a model server (repeat for several; the least busy gets the next unit). A URL ending in /v1 is OpenAI-compatible",
      collect,
      [],
    )
    .option("-m, --model <name>", "model to ask (default: the run's model)")
    .addOption(
      new Option("--provider <name>", "the servers' kind when the URL does not say")
        .choices(PROVIDERS)
        .default("ollama"),
    )
    .addOption(
      new Option(
        "-c, --concurrency <n>",
        "units analysed at once (default: one per server)",
      ).argParser(positiveInt),
    );
  return addSettingFlags(worker, "worker", AnalystContextSchema)
    .option("--name <name>", "this worker's name in --status (default host:pid)")
    .addOption(new Option("--poll-ms <ms>", "wait when the queue is empty").argParser(positiveInt))
    .option("--json", "one JSON summary as the last stdout line")
    .action((flags: WorkerFlags) => work(worker, flags));
}

/** Runs the worker the flags describe until it is stopped, then says what it did. */
async function work(worker: Command, flags: WorkerFlags): Promise<void> {
  if (!flags.postgres) throw new UsageError("keel worker needs --postgres URL");
  let servers;
  try {
    servers = parseServers(flags.server, flags.provider ?? "ollama");
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const name = flags.name ?? `${hostname()}:${process.pid}`;
  const say = (line: string) => process.stderr.write(`[${name}] ${line}\n`);
  const { persistence, queue, session } = await openAll(flags.postgres, {
    name,
    servers: servers.map((s) => s.url),
    log: say,
  });
  const signals = stopOnSignals(say);
  const { stop, abort } = signals;
  say(`taking units from the queue; servers ${servers.map((s) => s.url).join(", ")}`);
  try {
    const summary = await runWorker({
      queue,
      store: persistence.store,
      servers,
      session,
      stop: stop.signal,
      abort: abort.signal,
      log: say,
      ...(flags.model ? { model: flags.model } : {}),
      ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
      ...(flags.pollMs ? { pollMs: flags.pollMs } : {}),
      settings: flagSettings(worker),
    });
    process.stdout.write(
      flags.json
        ? `${JSON.stringify(summary)}\n`
        : `worker ${name}: ${summary.analyzed} units analysed, ${summary.duplicates} already done elsewhere, ${summary.failed} failed attempts\n`,
    );
    process.exitCode = abort.signal.aborted ? 130 : 0;
  } finally {
    signals.release();
    // its session's end frees its lock: units still in hand go back to the queue now
    await session.close(!abort.signal.aborted);
    await queue.close();
    await persistence.close();
  }
}

/** The worker's store, queue and session on the database; what opened is closed if one fails. */
async function openAll(postgres: string, who: Parameters<typeof WorkerSession.open>[1]) {
  const persistence = await openPersistence(postgres);
  const queue = await openQueue(postgres, { maintenanceSeconds: 30 }).catch(
    async (err: unknown) => {
      await persistence.close();
      throw err;
    },
  );
  const session = await WorkerSession.open(postgres, who).catch(async (err: unknown) => {
    await queue.close();
    await persistence.close();
    throw err;
  });
  return { persistence, queue, session };
}

/**
 * SIGINT/SIGTERM: the first finishes the units in hand (`stop`), a second stops at once (`abort`);
 * `release` takes the handlers off again.
 */
function stopOnSignals(say: (line: string) => void) {
  const stop = new AbortController();
  const abort = new AbortController();
  const onSignal = (sig: string) => {
    if (!stop.signal.aborted) {
      say(`${sig}: finishing the units in hand (send it again to stop now)`);
      stop.abort();
    } else abort.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    stop,
    abort,
    release: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
