/**
 * `keel calibrate`: measure a model on its server and keep what won as its profile (every later
 * run uses it), or `--show` what a profile holds: what was tried, what won and why.
 */
import { Command, InvalidArgumentError } from "commander";
import pc from "picocolors";
import { ContextSchema } from "../coder/context.js";
import { calibrate } from "../eval/calibrate/run.js";
import { EVAL_TASKS } from "../eval/tasks.js";
import { readEnv } from "../env.js";
import { readProfiles, type Profile } from "../run/profiles.js";
import { describeProfileUse, profileOf } from "../run/profile-use.js";
import { UsageError } from "../session/session.js";
import { resolvedServer } from "./server-options.js";
import { addSettingFlags, flagSettings } from "./setting-flags.js";
import { table } from "./table.js";

interface CalibrateFlags {
  quick?: boolean;
  full?: boolean;
  k?: number;
  task?: string[];
  show?: boolean;
  json?: boolean;
}

const attempts = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 10) throw new InvalidArgumentError("expected 1 to 10");
  return n;
};

export function calibrateCommand(): Command {
  const cmd = new Command("calibrate").description(
    "Measure a model on its server — tool channel, window, thinking, budgets, requests at once — with keel eval's tasks, and keep what won as its profile for every later run",
  );
  addSettingFlags(cmd, "eval", ContextSchema)
    .option("--quick", "3 tasks, k=1, fewer candidates: minutes on a small model (the default)")
    .option(
      "--full",
      "every task, k=3, more candidates (thinking cuts, budgets, 4 requests at once)",
    )
    .option("-k <n>", "attempts per task and candidate (default: 1 quick, 3 full)", attempts)
    .option(
      "--task <id>",
      `only this task (repeatable): ${EVAL_TASKS.map((t) => t.id).join(", ")}`,
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--show", "print the model's profile on this server: what was tried and what won")
    .option("--json", "print the profile as JSON (progress on stderr)")
    .addHelpText(
      "after",
      `
The profile is kept in keel's state folder (${readEnv().stateDir}/profiles), keyed by the server
and the model; keel run, analyze, worker and eval use it beneath their flags, environment and
settings files, while the server's version and the model's digest stay the same.

Examples:
  keel calibrate -m qwen3:8b                      # quick: a few minutes on a small model
  keel calibrate -m qwen3:8b --full -k 3          # the whole search, on a GPU box
  keel calibrate --provider openai --base-url http://127.0.0.1:8080/v1 -m local
  keel calibrate -m qwen3:8b --show               # what was tried, what won, and why`,
    )
    .action(async (flags: CalibrateFlags) => {
      process.exitCode = await run(flags, flagSettings(cmd));
    });
  return cmd;
}

async function run(flags: CalibrateFlags, settings: Record<string, unknown>): Promise<number> {
  if (flags.quick && flags.full) throw new UsageError("--quick or --full, not both");
  if (flags.show) return show(settings, flags.json);
  const mode = flags.full ? "full" : "quick";
  const tasks = flags.task?.map((id) => {
    const t = EVAL_TASKS.find((x) => x.id === id);
    if (!t)
      throw new UsageError(
        `no eval task ${id}; the tasks: ${EVAL_TASKS.map((x) => x.id).join(", ")}`,
      );
    return t;
  });
  const server = resolvedServer(settings);
  const { profile } = await calibrate({
    settings: { ...settings, model: server.model, provider: server.provider },
    mode,
    k: flags.k ?? (mode === "full" ? 3 : 1),
    ...(tasks ? { tasks } : {}),
    progress: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${flags.json ? JSON.stringify(profile) : formatProfile(profile)}\n`);
  return 0;
}

/** `--show`: the server's profiles of the model (or all of them), and whether a run would use it. */
async function show(settings: Record<string, unknown>, json?: boolean): Promise<number> {
  const server = resolvedServer(settings);
  const found = readProfiles(readEnv().stateDir, server.provider, server.url);
  const mine = found.profiles.filter(
    (p) =>
      settings.model === undefined ||
      p.profile.requested === server.model ||
      p.profile.identity.model === server.model,
  );
  if (mine.length === 0) {
    process.stderr.write(
      `keel: no profile of ${settings.model === undefined ? "any model" : server.model} on ${server.url}; keel calibrate -m MODEL makes one\n`,
    );
    return 1;
  }
  const { use } = await profileOf(ContextSchema, { ...settings });
  if (json) {
    process.stdout.write(`${JSON.stringify({ profiles: mine.map((p) => p.profile), use })}\n`);
    return 0;
  }
  const out = mine.map((p) => `${pc.dim(p.file)}\n${formatProfile(p.profile)}`);
  process.stdout.write(`${out.join("\n\n")}\n\n${describeProfileUse(use)}\n`);
  return 0;
}

/** A profile for people: the model and server, what the server showed, every trial, the winners. */
export function formatProfile(p: Profile): string {
  const id = p.identity;
  const head = [
    `${pc.bold(id.model)} on ${id.server} ${id.version || "(version unknown)"} at ${p.url}`,
    `digest ${id.digest || "unknown"}${id.quantization ? ` · ${id.quantization}` : ""} · measured ${p.at.slice(0, 16).replace("T", " ")} (${p.mode}, ${p.tasks.length} tasks × k=${p.k}, ${Math.round(p.seconds)} s)`,
  ];
  const facts = Object.entries(p.facts).map(([k, v]) => `  ${k.padEnd(12)} ${v}`);
  const rows = p.trials.map((t) => [
    t.dimension,
    t.label,
    `${t.passK}/${t.tasks}`,
    `${t.passes}/${t.attempts}`,
    `${Math.round(t.wellFormed * 100)}%`,
    `${t.seconds.toFixed(1)}s`,
    t.stopped ?? "",
  ]);
  const tried = rows.length
    ? table(
        ["choice", "candidate", `pass^${p.k}`, "passes", "well-formed", "time", "stopped"],
        rows,
      )
    : ["  (no choice had more than one candidate)"];
  const won = p.decisions.map((d) => `  ${d.dimension.padEnd(9)}${pc.green(d.winner)}: ${d.why}`);
  const settings = Object.keys(p.settings).length
    ? JSON.stringify(p.settings)
    : "(none: keel's defaults won)";
  return [
    ...head,
    pc.bold("server"),
    ...facts,
    pc.bold("tried"),
    ...tried,
    pc.bold("won"),
    ...won,
    `${pc.bold("settings")} ${settings}`,
  ].join("\n");
}
