/**
 * `keel eval`: how reliably a model drives keel, measured on a fixed task set against a live server
 * (Ollama or an OpenAI-compatible one): pass^k per task and tool channel, well-formed calls,
 * repairs, salvage, the ladder's rung, prompt tokens and time.
 */
import path from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import pc from "picocolors";
import { table } from "./table.js";
import { EVAL_MODES, runEval, type EvalMode, type EvalReport } from "../eval/run.js";
import { EVAL_AGENTS, type EvalAgent } from "../eval/peers.js";
import { EVAL_TASKS } from "../eval/tasks.js";
import { checkpointsOf, DEFAULT_STORE } from "./options.js";
import { ModelSettingsSchema } from "../run/settings.js";
import { resolvedServer } from "./server-options.js";
import { addSettingFlags, flagSettings } from "./setting-flags.js";
import { UsageError } from "../session/session.js";

interface EvalFlags {
  k: number;
  mode: EvalMode | "both";
  agent: EvalAgent;
  task?: string[];
  checkpoints?: string;
  json?: boolean;
}

const count = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 50) throw new InvalidArgumentError("expected 1 to 50");
  return n;
};

export function evalCommand(): Command {
  const cmd = new Command("eval").description(
    "Measure a model on a live server: a fixed set of small coding tasks (create, edit, analyse, run, recover), each run k times, checked on disk",
  );
  addSettingFlags(cmd, "eval", ModelSettingsSchema)
    .option("-k <n>", "attempts per task; pass^k counts a task only when all k pass", count, 3)
    .addOption(
      new Option("--mode <mode>", "tool channel: native, prompt, or both side by side")
        .choices([...EVAL_MODES, "both"])
        .default("both"),
    )
    .addOption(
      new Option(
        "--agent <agent>",
        "who runs the tasks: keel, or a bare LangGraph ReAct agent or langchain createAgent with the same model, server and tools (native channel only)",
      )
        .choices([...EVAL_AGENTS])
        .default("keel"),
    )
    .option(
      "--task <id>",
      `only this task (repeatable): ${EVAL_TASKS.map((t) => t.id).join(", ")}`,
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      "--checkpoints <url>",
      `where the runs and the report are kept (default: ${DEFAULT_STORE}; keel stats reads it)`,
    )
    .option("--json", "print the report as JSON (progress on stderr)")
    .addHelpText(
      "after",
      `
Each attempt is a real keel run in a fresh temporary workspace. The numbers:
  pass^k       every one of the k attempts passed its check
  well-formed  tool calls that needed no repair and were not refused as unknown or invalid
  repaired     calls keel repaired (names, field aliases, types) before running them
  salvaged     turns whose calls came as text on the native channel and were read from it
  rung         the highest rung of the recovery ladder any attempt reached

Examples:
  keel eval --model qwen3:8b -k 3
  keel eval --model qwen3:8b -k 3 --agent react      (the same tasks, a bare ReAct agent)
  keel eval --provider openai --base-url http://127.0.0.1:8080/v1 --model qwen --mode native`,
    )
    .action(async (flags: EvalFlags) => {
      process.exitCode = await evaluate(flags, flagSettings(cmd));
    });
  return cmd;
}

async function evaluate(flags: EvalFlags, settings: Record<string, unknown>): Promise<number> {
  const server = resolvedServer(settings);
  const checkpoints = checkpointsOf(flags.checkpoints, path.resolve("."));
  if (checkpoints === "memory")
    throw new UsageError(
      "keel eval keeps its runs: give --checkpoints sqlite:PATH or postgres://…",
    );
  const tasks = flags.task
    ? flags.task.map((id) => {
        const t = EVAL_TASKS.find((x) => x.id === id);
        if (!t)
          throw new UsageError(
            `no eval task ${id}; the tasks: ${EVAL_TASKS.map((x) => x.id).join(", ")}`,
          );
        return t;
      })
    : EVAL_TASKS;
  if (flags.agent !== "keel" && flags.mode === "prompt")
    throw new UsageError(
      `--mode prompt is keel's channel; ${flags.agent} calls tools through the server's API only`,
    );
  const modes =
    flags.agent !== "keel"
      ? ["native" as const]
      : flags.mode === "both"
        ? [...EVAL_MODES]
        : [flags.mode];
  process.stderr.write(
    `${pc.bold("keel eval")} ${flags.agent === "keel" ? "" : `(${flags.agent}) `}${server.model} at ${server.url}: ${tasks.length} tasks × k=${flags.k} × ${modes.join(" and ")}\n`,
  );
  const report = await runEval({
    k: flags.k,
    modes,
    tasks,
    checkpoints,
    agent: flags.agent,
    settings: { ...settings, model: server.model, provider: server.provider },
    onAttempt: (a, done, total) =>
      process.stderr.write(
        `  [${done}/${total}] ${a.task} ${a.mode} #${a.attempt}: ${a.pass ? pc.green("pass") : pc.red(`fail (${a.problem.slice(0, 80)})`)} ${pc.dim(`${a.seconds.toFixed(1)}s`)}\n`,
      ),
  });
  process.stdout.write(`${flags.json ? JSON.stringify(report) : formatEval(report)}\n`);
  return 0;
}

const pct = (x: number) => `${Math.round(x * 100)}%`;

export function formatEval(r: EvalReport): string {
  const head = [
    "task",
    "mode",
    `pass^${r.k}`,
    "passes",
    "well-formed",
    "repaired",
    "salvaged",
    "rung",
    "prompt tok",
    "time",
  ];
  const rows = r.scores.map((s) => [
    s.task,
    s.mode,
    s.passK ? "yes" : "no",
    `${s.passes}/${s.k}`,
    pct(s.wellFormedRate),
    pct(s.repairRate),
    pct(s.salvageRate),
    s.rung,
    String(s.promptTokens),
    `${s.seconds.toFixed(1)}s`,
  ]);
  const totals = Object.entries(r.passK).map(
    ([mode, t]) => `${mode}: pass^${r.k} ${t.passed}/${t.tasks} tasks`,
  );
  const who = r.agent === "keel" ? "" : ` (${r.agent}, bare)`;
  return [...table(head, rows), "", `${r.model}${who} · ${totals.join(" · ")}`].join("\n");
}
