/**
 * `keel stats`: how each model used each tool across the threads of a checkpoint store — failures
 * and repairs by kind, salvaged calls, loops cut, ladder rungs, outcomes, tokens — as a table,
 * JSON, or a self-contained HTML page. Read from the checkpoints; nothing is sent anywhere.
 */
import { writeFile } from "node:fs/promises";
import { Command, InvalidArgumentError } from "commander";
import pc from "picocolors";
import { storeExists } from "../persistence/checkpointer.js";
import { UsageError } from "../session/session.js";
import { openPersistence } from "../persistence/open.js";
import { collectRuns } from "../stats/collect.js";
import { allLessons } from "../coder/learning/ledger.js";
import { EVAL_NAMESPACE, type EvalReport } from "../eval/run.js";
import { statsPage } from "../stats/html.js";
import {
  aggregate,
  countsText as fmt,
  filterRuns,
  TOOL_COLUMNS,
  type Stats,
} from "../stats/runs.js";
import { plural, table } from "./table.js";
import { checkpointsOf, DEFAULT_STORE, threadId, workspaceFolder } from "./options.js";

interface StatsFlags {
  workspace: string;
  checkpoints?: string;
  model?: string;
  thread?: string;
  since?: string;
  until?: string;
  json?: boolean;
  html?: string;
}

/** A date (2026-11-01, or any ISO time) or a span back from now (7d, 12h). */
export function parseWhen(value: string, now = Date.now()): string {
  const span = /^(\d+)([dh])$/.exec(value);
  if (span)
    return new Date(
      now - Number(span[1]) * (span[2] === "d" ? 86_400_000 : 3_600_000),
    ).toISOString();
  const t = Date.parse(value);
  if (Number.isNaN(t))
    throw new InvalidArgumentError("expected a date (2026-11-01) or a span (7d, 12h)");
  return new Date(t).toISOString();
}

export function statsCommand(): Command {
  return new Command("stats")
    .description(
      "How each model used each tool across the threads of a checkpoint store: failures and repairs by kind, salvaged calls, loops cut, ladder rungs, outcomes, tokens",
    )
    .option("-w, --workspace <dir>", "the workspace whose store to read", ".")
    .option(
      "--checkpoints <url>",
      `memory | sqlite:PATH | postgres://… (default: ${DEFAULT_STORE})`,
    )
    .option("-m, --model <name>", "only this model")
    .option("-t, --thread <id>", "only this thread", threadId)
    .option("--since <when>", "only runs since a date or span (2026-11-01, 7d)", (v) =>
      parseWhen(v),
    )
    .option("--until <when>", "only runs until a date or span", (v) => parseWhen(v))
    .option("--json", "print the numbers as JSON")
    .option("--html <file>", "write a self-contained page with charts (opens offline)")
    .addHelpText(
      "after",
      `
Examples:
  keel stats                          # every run of this folder's store
  keel stats -m qwen3:8b --since 7d   # one model, the last week
  keel stats --html stats.html        # the same with charts`,
    )
    .action(async (flags: StatsFlags) => {
      const url = checkpointsOf(flags.checkpoints, workspaceFolder(flags.workspace));
      if (!storeExists(url))
        throw new UsageError(
          `no checkpoint store at ${url}: keel run writes one there (or give --checkpoints)`,
        );
      const persistence = await openPersistence(url);
      let stats: Stats;
      /** With no run matching the filters: the models the store has runs of. */
      let stored: string[] = [];
      try {
        const all = await collectRuns(persistence.checkpointer, flags.thread);
        const runs = filterRuns(all, flags);
        if (runs.length === 0) stored = [...new Set(all.map((r) => r.model))];
        const lessons = (await allLessons(persistence.store)).filter(
          (l) => !flags.model || l.model === flags.model,
        );
        const evals = (await persistence.store.search(EVAL_NAMESPACE, { limit: 1000 }))
          .map((i) => i.value as EvalReport)
          .filter((e) => !flags.model || e.model === flags.model)
          .map(({ at, model, k, passK }) => ({ at, model, k, passK }))
          .sort((a, b) => a.at.localeCompare(b.at));
        stats = { ...aggregate(runs), lessons, evals };
      } finally {
        await persistence.close();
      }
      if (flags.html) {
        const page = statsPage(stats, new Date().toISOString());
        await writeFile(flags.html, page).catch((err: Error) => {
          throw new UsageError(`cannot write ${flags.html}: ${err.message}`);
        });
        process.stderr.write(`wrote ${flags.html}\n`);
      }
      process.stdout.write(`${flags.json ? JSON.stringify(stats) : formatStats(stats, stored)}\n`);
    });
}

/** The report people read; `stored`: with no run shown, the models the store has runs of. */
export function formatStats(s: Stats, stored: readonly string[] = []): string {
  if (s.runs === 0)
    return stored.length > 0
      ? `No coder runs match (--model, --thread, --since, --until); the store has runs of ${stored.join(", ")}.`
      : "No coder runs in this store yet (keel run writes them; see --checkpoints).";
  const models = table(
    [
      "model",
      "runs",
      "outcomes",
      "calls",
      "failed",
      "repaired",
      "salvaged",
      "loops",
      "rungs",
      "prompt tok",
      "tok/s",
    ],
    s.models.map((m) => [
      m.model,
      String(m.runs),
      fmt(m.outcomes),
      String(m.calls),
      String(m.failures),
      String(m.repaired),
      String(m.salvaged),
      String(m.loopsCut),
      fmt(m.rungs),
      String(m.promptTokens),
      m.tokensPerSecond?.toFixed(1) ?? "-",
    ]),
  );
  const tools = table(
    TOOL_COLUMNS,
    s.tools.map((t) => [t.model, t.tool, String(t.calls), fmt(t.failures), fmt(t.repairs)]),
  );
  const lessons = (s.lessons ?? []).map(
    (l) =>
      `${l.status === "active" ? pc.green("active ") : pc.dim("retired")}  ${l.model}  ${l.tool}: ${l.line}  ${pc.dim(`(misuse ${l.before.misuses}/${l.before.calls} calls without it, ${l.after.misuses}/${l.after.calls} with it)`)}`,
  );
  return [
    pc.bold(`${plural(s.runs, "run")} in ${plural(s.threads, "thread")}`),
    "",
    ...models,
    "",
    ...tools,
    ...(s.stopped.length
      ? [
          "",
          pc.bold("stopped on an error (resume with keel run --thread ID)"),
          ...s.stopped.map(
            (r) =>
              `${r.at.slice(0, 16)}  ${r.thread}  ${r.model}  ${pc.red(r.error.split("\n")[0])}`,
          ),
        ]
      : []),
    ...(lessons.length ? ["", pc.bold("learned description lines"), ...lessons] : []),
    ...(s.evals?.length
      ? [
          "",
          pc.bold("keel eval"),
          ...s.evals.map(
            (e) =>
              `${e.at.slice(0, 16)}  ${e.model}  k=${e.k}  ${Object.entries(e.passK)
                .map(([m, t]) => `${m} pass^${e.k} ${t.passed}/${t.tasks}`)
                .join("  ")}`,
          ),
        ]
      : []),
  ].join("\n");
}
