/**
 * `keel undo` and `keel diff`: the agent's file changes in a workspace, shown and put back. Undo
 * previews what it will do, asks (or takes --yes), never overwrites a file changed since the agent's
 * last step, and rewinds the thread's conversation to the undone step.
 */
import { createInterface } from "node:readline/promises";
import { question } from "./question.js";
import { Command, InvalidArgumentError } from "commander";
import pc from "picocolors";
import { createCoderGraph } from "../coder/graph.js";
import { printable, printableName } from "../printable.js";
import { readEnv } from "../env.js";
import { parseCheckpointUrl, storeExists } from "../persistence/checkpointer.js";
import { openPersistence } from "../persistence/open.js";
import { lockThread } from "../persistence/thread-lock.js";
import { describeAction } from "../undo/plan.js";
import { rewindTo } from "../coder/rewind.js";
import { resumeCommand } from "../session/resume-command.js";
import { readJournal, runFlags } from "../undo/journal.js";
import { checkpointsOf, DEFAULT_STORE, threadFlags, threadId, workspaceFolder } from "./options.js";
import {
  applyUndo,
  NothingToUndoError,
  planThreadUndo,
  threadDiff,
  type UndoPlan,
} from "../undo/undo.js";

interface UndoFlags {
  workspace: string;
  thread?: string;
  to?: number;
  yes?: boolean;
  dryRun?: boolean;
  checkpoints?: string;
  json?: boolean;
}

const stepNumber = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a step number ≥ 1");
  return n;
};

export function undoCommand(): Command {
  return new Command("undo")
    .description(
      "Put back the files the agent changed in a thread (restore edited files, remove created ones), with a preview; files changed since by someone else are left alone",
    )
    .option("-w, --workspace <dir>", "the workspace the agent worked in", ".")
    .option("-t, --thread <id>", "the thread (default: the one that changed files last)", threadId)
    .option("--to <step>", "undo from this step on (steps as keel diff lists them)", stepNumber)
    .option("-y, --yes", "apply without asking")
    .option("--dry-run", "only show what would be done")
    .option("--checkpoints <url>", `the run's checkpoints (default: ${DEFAULT_STORE})`)
    .option("--json", "print the plan and what was done as JSON")
    .addHelpText(
      "after",
      `
The conversation is rewound too: keel run --thread <id> then continues from before the undone step,
and the model is told what was undone.

Examples:
  keel undo                 # everything the last thread changed, after a preview
  keel undo --to 3 --yes    # keep steps 1-2, undo the rest`,
    )
    .action(async (flags: UndoFlags) => {
      process.exitCode = await runUndo(flags);
    });
}

async function runUndo(flags: UndoFlags): Promise<number> {
  const workspace = workspaceFolder(flags.workspace);
  const say = (line: string) => (flags.json ? process.stderr : process.stdout).write(`${line}\n`);
  const plan = await planThreadUndo(workspace, {
    ...(flags.thread ? { thread: flags.thread } : {}),
    ...(flags.to ? { from: flags.to } : {}),
  }).catch((err: unknown) => {
    // all undone already: asked again, the undo is done (exit 0, as `rm -f` is)
    if (err instanceof NothingToUndoError && err.undoneThread !== undefined) return err;
    throw err;
  });
  if (plan instanceof NothingToUndoError) {
    const none = { thread: plan.undoneThread, steps: [], restored: [], removed: [], kept: [] };
    if (flags.json)
      process.stdout.write(`${JSON.stringify({ ...none, applied: false, rewound: false })}\n`);
    say(`nothing to undo: ${plan.message}`);
    return 0;
  }
  // with --json, stdout's last line is what was done (or would be), whatever the path
  const result = (applied: boolean, rewound = false) => {
    if (flags.json)
      process.stdout.write(`${JSON.stringify({ ...outcomeOf(plan), applied, rewound })}\n`);
  };
  say(preview(plan));
  const changes = plan.actions.filter((a) => a.action !== "keep");
  if (flags.dryRun) {
    result(false);
    return 0;
  }
  if (!flags.yes) {
    const env = readEnv();
    if (!process.stdin.isTTY || env.ci) {
      say(pc.yellow("not applied: run again with --yes to apply (or --dry-run to only look)"));
      result(false);
      return 1;
    }
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    const answer = await question(rl, `${pc.cyan("?")} Apply? [y/N] `);
    rl.close();
    if (!/^y(es)?$/i.test(answer.trim())) {
      say("nothing changed");
      result(false);
      return 1;
    }
  }
  const checkpoints = checkpointsOf(flags.checkpoints, workspace);
  // A thread a keel is running is not put back under it: its next steps would build on files gone.
  const unlock = storeExists(checkpoints)
    ? await lockThread(parseCheckpointUrl(checkpoints), plan.thread)
    : () => Promise.resolve();
  let rewound: boolean;
  try {
    await applyUndo(workspace, plan);
    rewound = await rewind(plan, checkpoints);
  } finally {
    await unlock();
  }
  const kept = plan.actions.length - changes.length;
  const again = threadFlags(flags, workspace, runFlags(await readJournal(workspace), plan.thread));
  const summary = outcomeOf(plan);
  if (flags.json) result(true, rewound);
  else
    say(
      [
        `${pc.green("undone")}: ${summary.restored.length} restored, ${summary.removed.length} removed${kept ? `, ${kept} left as they are` : ""}`,
        rewound
          ? `the conversation is back before step ${plan.steps[0]!.step}; continue with: ${resumeCommand(plan.thread, again ?? [])}`
          : pc.dim(
              `(the conversation was not rewound: no checkpoint of thread ${plan.thread} before step ${plan.steps[0]!.step} in the checkpoints)`,
            ),
      ].join("\n"),
    );
  return 0;
}

/** A plan as --json says it: the thread, its steps, and the files restored, removed and kept. */
const outcomeOf = (plan: UndoPlan) => ({
  thread: plan.thread,
  steps: plan.steps.map((s) => s.step),
  restored: plan.actions.filter((a) => a.action === "restore").map((a) => a.path),
  removed: plan.actions.filter((a) => a.action === "remove").map((a) => a.path),
  kept: plan.actions.filter((a) => a.action === "keep").map((a) => a.path),
});

function preview(plan: UndoPlan): string {
  const steps = plan.steps.map((s) => `  ${pc.dim(`step ${s.step}`)}  ${printableName(s.label)}`);
  const actions = plan.actions.length
    ? plan.actions.map(
        (a) => `  ${a.action === "keep" ? pc.yellow(describeAction(a)) : describeAction(a)}`,
      )
    : ["  (every file is already as it was)"];
  return [`Undo in thread ${plan.thread}:`, ...steps, "", ...actions].join("\n");
}

async function rewind(plan: UndoPlan, checkpoints: string): Promise<boolean> {
  if (!storeExists(checkpoints)) return false;
  const persistence = await openPersistence(checkpoints);
  try {
    const graph = createCoderGraph().compile({
      checkpointer: persistence.checkpointer,
      store: persistence.store,
    });
    return await rewindTo(graph, plan.thread, plan.steps[0]!);
  } finally {
    await persistence.close();
  }
}

export function diffCommand(): Command {
  return new Command("diff")
    .description("Show what the agent changed in a thread: its steps and a unified diff")
    .option("-w, --workspace <dir>", "the workspace the agent worked in", ".")
    .option("-t, --thread <id>", "the thread (default: the one that changed files last)", threadId)
    .option("--stat", "only the steps and files, no diff")
    .option("--json", "print the thread, its steps (with their files) and the patch as JSON")
    .addHelpText(
      "after",
      `
Examples:
  keel diff                 # the last thread that changed files
  keel diff --stat -t ID    # one thread's steps and files only
  keel undo --to 3          # then put back steps 3 and later`,
    )
    .action(
      async (flags: { workspace: string; thread?: string; stat?: boolean; json?: boolean }) => {
        const workspace = workspaceFolder(flags.workspace);
        const diff = await threadDiff(workspace, flags.thread).catch((err: unknown) => {
          // An empty diff is an answer, as with git diff.
          if (!(err instanceof NothingToUndoError)) throw err;
          process.stdout.write(
            flags.json
              ? `${JSON.stringify({ thread: flags.thread ?? null, steps: [], patch: "", note: err.message })}\n`
              : `${err.message}\n`,
          );
        });
        if (!diff) return;
        const { thread, steps, patch } = diff;
        if (flags.json) {
          const listed = steps.map((s) => ({
            step: s.step,
            label: s.label,
            files: s.files.map((f) => f.path),
          }));
          process.stdout.write(
            `${JSON.stringify({ thread, steps: listed, ...(flags.stat ? {} : { patch }) })}\n`,
          );
          return;
        }
        const lines = [
          `thread ${thread}:`,
          ...steps.map(
            (s) =>
              `  ${pc.dim(`step ${s.step}`)}  ${printableName(s.label)}  ${pc.dim(s.files.map((f) => printableName(f.path)).join(", "))}`,
          ),
        ];
        // what is on disk, shown as it is: an escape sequence in a file erases no line on screen
        const shown = colorPatch(printable(patch));
        process.stdout.write(`${lines.join("\n")}\n${flags.stat ? "" : `\n${shown}`}`);
      },
    );
}

function colorPatch(patch: string): string {
  if (!process.stdout.isTTY) return patch;
  return patch
    .split("\n")
    .map((l) =>
      l.startsWith("+") && !l.startsWith("+++")
        ? pc.green(l)
        : l.startsWith("-") && !l.startsWith("---")
          ? pc.red(l)
          : l.startsWith("@@")
            ? pc.cyan(l)
            : l,
    )
    .join("\n");
}
