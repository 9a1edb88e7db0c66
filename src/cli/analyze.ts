/**
 * `keel analyze`: run (or resume) the analyst graph on a folder with a progress display, and
 * print where the report is. Works without a model: the structural report, clearly labelled.
 */
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { isGraphDrained, type RunControl } from "@langchain/langgraph";
import pc from "picocolors";
import {
  analystRunConfig,
  AnalystContextSchema,
  analystSettingsFrom,
  type AnalystSettingsInput,
} from "../analyst/context.js";
import { createAnalystGraph } from "../analyst/graph.js";
import type { AnalysisProgress } from "../analyst/runtime.js";
import type { AnalystStateValue } from "../analyst/state.js";
import { resolveDeps, type GraphDeps } from "../run/model.js";
import { describeProfileUse, profileOf, type ProfileUse } from "../run/profile-use.js";
import { ModelServerError } from "../models/errors.js";
import { threadGraph } from "../persistence/thread-graph.js";
import { openPersistence, type Persistence } from "../persistence/open.js";
import { lockThread } from "../persistence/thread-lock.js";
import { openDistributed, type DistributedOptions } from "../distributed/coordinator.js";
import { analyzeStatus } from "./worker.js";
import { pendingNodes, UsageError } from "../session/session.js";
import { Command, Option } from "commander";
import { installCtrlC } from "./interrupt.js";
import { checkpointsOf, DEFAULT_STORE, positiveInt, threadId } from "./options.js";
import { addSettingFlags, flagSettings } from "./setting-flags.js";
import { checkSettingsFiles } from "./server-options.js";
import { createProgress, formatAnalyzeOutcome, type AnalyzeOutcome } from "./analyze-display.js";

export interface AnalyzeOptions {
  dir: string;
  threadId?: string;
  checkpoints?: string;
  settings: Omit<AnalystSettingsInput, "target">;
  json?: boolean;
  deps?: GraphDeps;
  control?: RunControl;
  signal?: AbortSignal;
  /** Units go to `keel worker`s through the job queue on the `checkpoints` Postgres database. */
  distributed?: DistributedOptions;
  /**
   * The model was asked for by name (`--model`): a server that cannot give it ends the command
   * with a `ModelServerError` before anything is written, instead of the structural report.
   */
  modelRequired?: boolean;
}

/** The thread a folder's analysis uses unless told otherwise: the same command resumes it. */
export const defaultAnalysisThread = (target: string, depth: string) =>
  `analyze-${createHash("sha1").update(`${target}\n${depth}`).digest("hex").slice(0, 10)}`;

export async function runAnalyze(o: AnalyzeOptions): Promise<AnalyzeOutcome> {
  const { target, use, run } = await analysisSettings(o);
  const threadId = o.threadId ?? defaultAnalysisThread(target, run.context.depth);
  const persistence = await openPersistence(checkpointsOf(o.checkpoints, target));
  const { checkpointer, store } = persistence;
  if (o.distributed && persistence.target.kind !== "postgres") {
    await persistence.close();
    throw new UsageError("--workers needs --postgres URL: the workers share its queue and store");
  }
  const { dist, unlock } = await lockedRun(persistence, target, threadId, o);
  const graph = createAnalystGraph({ ...o.deps, ...dist?.graph }).compile({ checkpointer, store });
  const config = {
    ...run,
    configurable: { thread_id: threadId },
    signal: o.signal,
    ...(o.control ? { control: o.control } : {}),
  };
  const progress = createProgress(o.json);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const outcome = async (
    status: AnalyzeOutcome["status"],
    exitCode: AnalyzeOutcome["exitCode"],
    error?: string,
  ): Promise<AnalyzeOutcome> =>
    analysisOutcome(
      (await graph.getState(config)).values as Partial<AnalystStateValue>,
      { threadId, target, model: run.context.model, use },
      status,
      exitCode,
      error,
    );
  try {
    const before = await graph.getState(config);
    if ((await threadGraph(checkpointer, config)) === "coder")
      throw new UsageError(
        `thread ${threadId} is a coding run (keel run), not an analysis: continue it with keel run --thread ${threadId}, or give another --thread`,
      );
    const resuming = pendingNodes(before).length > 0;
    if (resuming) {
      const v = before.values as AnalystStateValue;
      say(
        `resuming analysis thread ${threadId}: ${v.cursor}/${v.total} units and ${v.folderCursor}/${v.folderTotal} folders done`,
      );
    } else say(`analysis thread ${threadId} (resume with the same command if it stops)`);
    const stream = await graph.stream(resuming ? null : {}, {
      ...config,
      streamMode: ["custom", "updates"],
    });
    await showAnalysis(
      stream as AsyncIterable<[string, unknown]>,
      progress,
      say,
      run.context.model,
    );
    progress.stop();
    return await outcome("done", 0);
  } catch (err) {
    progress.stop();
    // awaited here: the finally below closes the store the outcome reads
    if (err instanceof ModelServerError) return await outcome("error", 3, err.message);
    if (isGraphDrained(err) || o.signal?.aborted) return await outcome("interrupted", 130);
    throw err;
  } finally {
    await dist?.queue.close();
    for (const release of unlock) await release();
    await persistence.close();
  }
}

/** The analysis's settings (the model's profile beneath them), checked before anything opens. */
async function analysisSettings(o: AnalyzeOptions) {
  const target = path.resolve(o.dir);
  if (!existsSync(target) || !statSync(target).isDirectory())
    throw new UsageError(`${target} is not an existing folder; pass the folder to analyse`);
  const input = { ...o.settings, target };
  const { beneath, use } = await profileOf(AnalystContextSchema, input);
  if (use.status === "applied" || use.status === "stale")
    process.stderr.write(`${describeProfileUse(use)}\n`);
  const run = analystRunConfig("", input, undefined, beneath);
  const settings = analystSettingsFrom(run);
  if (settings.out && existsSync(settings.out) && statSync(settings.out).isDirectory())
    throw new UsageError(
      `output path ${settings.out} is a folder; pass a file for the report, e.g. -o ${path.join(settings.out, "report.md")}`,
    );
  if (o.modelRequired && settings.model !== "none") await modelThere(settings, o);
  return { target, use, run };
}

/**
 * The locks of one coordinator per target and per thread (a second is refused with the holder
 * named), and the job queue of a distributed run; on failure, what was taken is given back.
 */
async function lockedRun(
  persistence: Persistence,
  target: string,
  threadId: string,
  o: AnalyzeOptions,
) {
  const unlock: Array<() => Promise<void>> = [];
  const opened = async () => {
    unlock.push(
      await lockThread(persistence.target, `analysis:${target}`, `the analysis of ${target}`),
    );
    unlock.push(await lockThread(persistence.target, threadId));
    return o.distributed ? openDistributed(o.checkpoints!, o.distributed) : undefined;
  };
  const dist = await opened().catch(async (err: unknown) => {
    for (const release of unlock) await release();
    await persistence.close();
    throw err;
  });
  return { dist, unlock };
}

/** The outcome of an analysis in the state it reached. */
function analysisOutcome(
  s: Partial<AnalystStateValue>,
  run: { threadId: string; target: string; model: string; use: ProfileUse },
  status: AnalyzeOutcome["status"],
  exitCode: AnalyzeOutcome["exitCode"],
  error: string | undefined,
): AnalyzeOutcome {
  return {
    status,
    thread_id: run.threadId,
    target: run.target,
    model: s.modelMode === "model" ? run.model : null,
    ...(s.noModelReason ? { no_model_reason: s.noModelReason } : {}),
    units: s.total ?? 0,
    analyzed: s.analyzed ?? 0,
    reused: s.reused ?? 0,
    failed: s.failed ?? 0,
    folders: s.folderTotal ?? 0,
    folders_analyzed: s.foldersAnalyzed ?? 0,
    folders_reused: s.foldersReused ?? 0,
    largest_request_tokens: s.largestRequest ?? 0,
    ...(s.reportPath && status === "done" ? { report: s.reportPath, report_json: s.jsonPath } : {}),
    ...(error ? { error } : {}),
    profile: run.use,
    exitCode,
  };
}

/** Shows an analysis's stream: its progress, and what the enumeration found and how it goes on. */
async function showAnalysis(
  stream: AsyncIterable<[string, unknown]>,
  progress: ReturnType<typeof createProgress>,
  say: (line: string) => void,
  model: string,
): Promise<void> {
  for await (const [mode, chunk] of stream) {
    if (mode === "custom" && (chunk as AnalysisProgress).type === "analysis")
      progress.event(chunk as AnalysisProgress);
    if (mode === "updates" && (chunk as Record<string, Partial<AnalystStateValue>>).enumerate) {
      const e = (chunk as Record<string, Partial<AnalystStateValue>>).enumerate!;
      say(
        e.modelMode === "model"
          ? `${e.total} units, ${e.folderTotal} folders; analysing with ${model}`
          : pc.yellow(
              `${e.total} units, ${e.folderTotal} folders. NO MODEL IS USED: ${e.noModelReason?.replace(/\.$/, "")}. Writing the structural report.`,
            ),
      );
    }
  }
}

/**
 * Whether the server gives the model a run asked for by name: the probe's answer, or a
 * `ModelServerError` (unreachable, silent, model missing, a model that cannot generate text).
 */
async function modelThere(
  s: ReturnType<typeof analystSettingsFrom>,
  o: Pick<AnalyzeOptions, "deps" | "signal">,
): Promise<void> {
  const probe = resolveDeps(o.deps ?? {}).probe;
  if (!probe) return;
  const policy = {
    retries: 1,
    baseMs: 200,
    url: s.serverUrl,
    model: s.model,
    timeoutMs: s.requestTimeoutMs,
    ...(s.provider ? { provider: s.provider } : {}),
    ...(s.apiKey ? { apiKey: s.apiKey } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  };
  const profile = await probe(s.serverUrl, s.model, policy);
  if (!profile.capabilities.includes("completion"))
    throw new ModelServerError(
      "bad_request",
      s.serverUrl,
      s.model,
      `model "${s.model}" cannot generate text (its capabilities: ${profile.capabilities.join(", ") || "none"})`,
      1,
      s.provider ? { provider: s.provider } : {},
    );
}

/** The `keel analyze` command. */
export function analyzeCommand(): Command {
  const analyze = new Command("analyze")
    .alias("analyse")
    .description(
      "Analyse a codebase: every file, then every folder, then the whole; resumable, incremental. Without a model: the structural report",
    )
    .argument("[dir]", "folder to analyse", ".")
    .option(
      "-t, --thread <id>",
      "thread id (default: derived from the folder, so the same command resumes)",
      threadId,
    );
  addSettingFlags(analyze, "analyze", AnalystContextSchema)
    .option("--checkpoints <url>", `memory | sqlite:PATH (default: ${DEFAULT_STORE})`)
    .option("--json", "progress as JSON lines on stderr; one JSON object as the last stdout line")
    .option(
      "--postgres <url>",
      "Postgres for checkpoints, findings and the job queue (several machines)",
    )
    .option(
      "--workers",
      "hand the units to `keel worker`s through the queue on --postgres, and wait",
    )
    .addOption(
      new Option(
        "--lease <seconds>",
        "--workers: the last resort, how long a unit may stay with a worker that neither finishes nor renews it (a dead worker's units come back within seconds)",
      )
        .argParser(positiveInt)
        .default(undefined, "900"),
    )
    .addOption(
      new Option("--queue-window <n>", "--workers: units on the queue ahead of the completions")
        .argParser(positiveInt)
        .default(undefined, "1000"),
    )
    .option("--status", "show the progress of the runs on the --postgres queue, and exit")
    .addHelpText(
      "after",
      `
Stopped runs resume: the same command skips every unit already analysed (and, after edits, every
unchanged one).

Examples:
  keel analyze                                   # this folder, with the default model
  keel analyze ../service --model qwen2.5-coder:7b
  keel analyze . --postgres postgres://… --workers   # hand units to keel worker processes`,
    )
    .action((dir: string, flags: AnalyzeFlags) => analyzeAction(analyze, dir, flags));
  return analyze;
}

/** The flags of `keel analyze` beside the settings. */
interface AnalyzeFlags {
  thread?: string;
  checkpoints?: string;
  json?: boolean;
  postgres?: string;
  workers?: boolean;
  lease?: number;
  queueWindow?: number;
  status?: boolean;
}

/** Runs `keel analyze` as its flags ask and prints the outcome; sets the exit code. */
async function analyzeAction(analyze: Command, dir: string, flags: AnalyzeFlags): Promise<void> {
  if (flags.status) return analyzeStatus(flags.postgres, flags.json);
  if (flags.workers && !flags.postgres)
    throw new UsageError("--workers needs --postgres URL: the workers share its queue");
  checkSettingsFiles(path.resolve(dir), flagSettings(analyze));
  const stop = installCtrlC(
    (line) => process.stderr.write(`\n${line}\n`),
    (flags.postgres ?? flags.checkpoints ?? "") !== "memory",
  );
  const settings = flagSettings(analyze);
  try {
    const outcome = await runAnalyze({
      dir,
      modelRequired: settings.model !== undefined,
      threadId: flags.thread,
      checkpoints: flags.postgres ?? flags.checkpoints,
      ...(flags.workers
        ? { distributed: { leaseSeconds: flags.lease, window: flags.queueWindow } }
        : {}),
      json: flags.json,
      control: stop.control,
      signal: stop.signal,
      settings,
    });
    const { exitCode, ...fields } = outcome;
    process.stdout.write(
      `${flags.json ? JSON.stringify(fields) : formatAnalyzeOutcome(outcome)}\n`,
    );
    process.exitCode = stop.exitCode(exitCode);
  } catch (err) {
    // the model asked for by name is not there: nothing was analysed, no report was written
    if (!(err instanceof ModelServerError)) throw err;
    process.stderr.write(`keel: ${err.message}\n`);
    if (flags.json)
      process.stdout.write(
        `${JSON.stringify({ status: "error", target: path.resolve(dir), error: err.message })}\n`,
      );
    process.exitCode = 3;
  } finally {
    stop.dispose();
  }
}
