/**
 * Run settings: one zod schema with defaults, each field described so LangGraph Studio shows help
 * text. Read by every node through `settingsFrom(config)`.
 */
import { z } from "zod";
import { TOOL_MODE_SETTINGS } from "../models/capabilities.js";
import { FORMAT_NAMES } from "../models/tool-calls/types.js";
import { setting } from "../run/setting-meta.js";
import { layered } from "../run/layered.js";
import {
  ANYONE,
  ModelSettingsSchema,
  parseSettings,
  PERSON,
  settingsContext,
  type SettingsSource,
} from "../run/settings.js";
import type { LoopSettings } from "../guard/loop.js";
import type { Isolation } from "../sandbox/policy.js";
import { McpServersSchema } from "../mcp/config.js";
import { APPROVAL_MODE_HELP, APPROVAL_MODES, parseRule, type Rules } from "../tools/permissions.js";

/** Approval rules: each `tool` or `tool(pattern)`. */
const RuleList = z
  .array(
    z.string().refine((r) => !("error" in parseRule(r)), {
      message: "a rule is tool or tool(pattern), e.g. run_command(git push*) or edit_file(src/**)",
    }),
  )
  .default([]);

/** Each approval mode with what it lets run, for the setting's help and its flag's. */
const APPROVAL_MODES_HELP = APPROVAL_MODES.map((m) => `${m} (${APPROVAL_MODE_HELP[m]})`).join("; ");

/** The flags of `keel run`. */
const RUN = ["run"] as const;

/** A guard's threshold, whole and at least `min`: the person's alone (a looser one lets more by). */
const guard = (min: number, byDefault: number, describe: string) =>
  setting(z.number().int().min(min).default(byDefault).describe(describe), PERSON);

/** The coder's run settings: the shared model settings and the coder's own. */
export const ContextSchema = ModelSettingsSchema.extend({
  workspace: setting(
    z
      .string()
      .default(".")
      .describe("Folder the agent may read and write; every path is confined to it"),
    { trust: "folder" },
  ),
  maxTurns: setting(
    z
      .number()
      .int()
      .min(1)
      .default(40)
      .describe(
        "Most model turns with tools (act calls) in one run; when they are spent, one more turn without tools writes the summary",
      ),
    { flag: "--max-turns <n>", commands: RUN, trust: "lower" },
  ),
  maxToolCalls: setting(
    z.number().int().min(1).default(120).describe("Most tool calls in one run"),
    { flag: "--max-tool-calls <n>", commands: RUN, trust: "lower" },
  ),
  toolMode: setting(
    z
      .enum(TOOL_MODE_SETTINGS)
      .default("auto")
      .describe(
        "How tools reach the model: native (the tools field) or prompt (described once in the system prompt, calls parsed from text); auto picks native iff Ollama lists the tools capability",
      ),
    {
      flag: "--tool-mode <mode>",
      commands: RUN,
      flagHelp: "how tools reach the model (auto: native iff Ollama lists the tools capability)",
      ...ANYONE,
    },
  ),
  toolFormat: setting(
    z
      .enum(["auto", ...FORMAT_NAMES])
      .default("auto")
      .describe(
        "Prompt mode: the call syntax keel asks the model to write and reads first (auto: the one the model's chat template or family points at; keel calibrate may choose another)",
      ),
    {
      flag: "--tool-format <format>",
      commands: ["run"],
      flagHelp: "prompt mode's call syntax, e.g. hermes or llama3-json (auto: the model's own)",
      example: "llama3-json",
      ...ANYONE,
    },
  ),
  thinkCut: setting(
    z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        "Thinking models: stop a reply's thinking after this many tokens and ask the turn again without thinking, the partial thought given to the model (0: never cut)",
      ),
    { flag: "--think-cut <tokens>", commands: ["run"], example: 512, ...ANYONE },
  ),
  interactive: setting(
    z
      .boolean()
      .default(false)
      .describe(
        "Ask a human (interrupt) for approvals and when recovery runs out, instead of ending",
      ),
    ANYONE,
  ),
  autoApprove: setting(
    z
      .boolean()
      .default(false)
      .describe(
        "Answer yes to every approval question (the CLI's --yes), except running a command without the OS sandbox, a protected write and a git command that writes a repository (a person must see those)",
      ),
    {
      flag: "-y, --yes",
      commands: RUN,
      flagHelp:
        "answer yes to every approval question (commands beyond the workspace, --approval ask|edits); deny rules and running unsandboxed still refuse, and protected writes and git writes (commit, checkout…) still need a person",
      ...PERSON,
    },
  ),
  approval: setting(
    z
      .enum(APPROVAL_MODES)
      .default("auto")
      .describe(`What runs without asking: ${APPROVAL_MODES_HELP}. Deny rules win in every mode`),
    {
      flag: "--approval <mode>",
      commands: RUN,
      flagHelp: `what runs without asking: ${APPROVAL_MODES_HELP}. Rules in the settings (allowRules, askRules, denyRules) refine it; deny rules win in every mode`,
      ...PERSON,
    },
  ),
  allowRules: setting(
    RuleList.describe(
      "Calls that run without asking, as tool or tool(pattern): edit_file(src/**), run_command(npm test*). User settings only",
    ),
    { ...PERSON, example: ["run_command(npm test*)"] },
  ),
  askRules: setting(
    RuleList.describe(
      "Calls a person is asked about in every mode but plan, e.g. run_command(git push*), write_file(*.lock)",
    ),
    { trust: "added", example: ["run_command(git push*)"] },
  ),
  denyRules: setting(
    RuleList.describe(
      "Calls refused in every mode, even with --yes, e.g. run_command(rm -rf*), *(.env), edit_file(migrations/**)",
    ),
    { trust: "added", example: ["run_command(rm -rf*)"] },
  ),
  checkCommand: setting(
    z
      .string()
      .optional()
      .describe(
        "A command run (sandboxed) after each file change, its output added to the change's result, e.g. npx tsc --noEmit or python -m py_compile {file} ({file}: the changed file)",
      ),
    {
      flag: "--check <command>",
      commands: RUN,
      flagHelp:
        "run this command (sandboxed) after each file change and show its output to the model, e.g. 'npx tsc --noEmit' or 'python -m py_compile {file}'",
      example: "npx tsc --noEmit",
      // it names a program to run
      ...PERSON,
    },
  ),
  learnDescriptions: setting(
    z
      .boolean()
      .default(true)
      .describe(
        "Learn from misuse: a tool this model misused the same way in several threads gets one line of right-vs-wrong usage in its description (kept while it lowers the misuse rate; see keel stats)",
      ),
    ANYONE,
  ),
  // user-only: a project's file must not take away the person's way back
  undo: setting(
    z
      .boolean()
      .default(true)
      .describe(
        "Snapshot the files each changing step touches (a shadow git repository in keel's state folder, outside the workspace), for keel undo and keel diff",
      ),
    PERSON,
  ),
  allowRead: setting(
    z
      .array(z.string())
      .default([])
      .describe(
        "Sandbox: folders or files outside the workspace that commands may read (absolute or ~/...)",
      ),
    {
      flag: "--allow-read <path>",
      commands: RUN,
      flagHelp: "sandbox: let commands read this folder or file outside the workspace (repeatable)",
      paths: true,
      ...PERSON,
    },
  ),
  allowWrite: setting(
    z
      .array(z.string())
      .default([])
      .describe("Sandbox: folders outside the workspace that commands may write"),
    {
      flag: "--allow-write <path>",
      commands: RUN,
      flagHelp: "sandbox: let commands write this folder outside the workspace (repeatable)",
      paths: true,
      ...PERSON,
    },
  ),
  allowHosts: setting(
    z
      .array(z.string())
      .default([])
      .describe(
        "Sandbox: hosts commands may reach (e.g. api.github.com, *.example.com); approved installs also reach the package registries",
      ),
    {
      flag: "--allow-host <host>",
      commands: RUN,
      flagHelp:
        "sandbox: let commands reach this host, e.g. api.github.com or *.example.com (repeatable)",
      ...PERSON,
      example: ["api.github.com"],
    },
  ),
  runCommandsUnsandboxed: setting(
    z
      .boolean()
      .default(false)
      .describe(
        "Run commands without the OS sandbox: they can then read and write all of your files. Off: commands run sandboxed, or (where the OS cannot sandbox) only after a person approves each one",
      ),
    {
      flag: "--run-commands-unsandboxed",
      commands: RUN,
      flagHelp:
        "run commands WITHOUT the OS sandbox (they can read and write all your files); for machines where `keel doctor` says the sandbox cannot run",
      ...PERSON,
    },
  ),
  mcpServers: setting(
    McpServersSchema.default({}).describe(
      "MCP servers whose tools the agent may use, in the mcpServers shape (command/args/env or url/headers; includeTools, excludeTools, timeout, trust); the workspace's .mcp.json adds its own (never trusted)",
    ),
    { ...PERSON, example: { files: { command: "mcp-files" } } },
  ),
  commandTimeoutMs: setting(
    z.number().int().positive().default(120_000).describe("Default time limit of run_command"),
    PERSON,
  ),
  errorStreak: guard(1, 3, "Consecutive failed tool calls that trigger recovery"),
  recoveryHints: guard(
    0,
    1,
    "Recovery ladder: strikes of one failure kind answered with a hint before re-planning",
  ),
  recoveryReplans: guard(
    0,
    1,
    "Recovery ladder: re-plans before the forced summary turn and the end (or asking a human)",
  ),
  loopRepeatExplore: guard(2, 3, "Loop guard: identical read-only calls in a row that make a loop"),
  loopRepeatMutate: guard(
    2,
    2,
    "Loop guard: identical file-changing calls in a row that make a loop",
  ),
  loopRepeatCommand: guard(
    2,
    3,
    "Loop guard: identical commands in a row, with identical output, that make a loop",
  ),
  loopWindowCount: guard(
    2,
    4,
    "Loop guard: the same call this many times among the last loopWindowSize calls",
  ),
  loopWindowSize: guard(3, 12, "Loop guard: how many recent calls the window detectors look at"),
  loopCycles: guard(2, 3, "Loop guard: full A-B-A-B (or A-B-C) cycles that make a loop"),
  loopNoProgress: guard(
    2,
    3,
    "Loop guard: the same call returning the same result this many times",
  ),
  loopWobble: guard(
    3,
    5,
    "Loop guard: the same tool on the same target with slightly changed arguments, this many times in a row",
  ),
  toolTimeoutMs: setting(
    z
      .number()
      .int()
      .positive()
      .default(60_000)
      .describe(
        "Time limit of a call of any other tool (grep, glob, the file tools, analyze_code); past it the call is stopped and the model told",
      ),
    PERSON,
  ),
});

export type Settings = z.output<typeof ContextSchema>;
export type SettingsInput = z.input<typeof ContextSchema>;

/** The coder's settings of a run (see `parseSettings`). */
export const settingsFrom = (config?: SettingsSource) => parseSettings(ContextSchema, config);

/** LangGraph's recursion limit follows from the budgets: each tool call and each turn is a step. */
export function recursionLimitFor(s: Pick<Settings, "maxTurns" | "maxToolCalls">): number {
  return 10 + s.maxTurns * 3 + s.maxToolCalls;
}

/**
 * The invoke/stream config of a coder run: thread, validated context and the derived recursion
 * limit. `profile`: the model's calibration profile's settings, the lowest layer (`layered`).
 */
export function runConfig(
  threadId: string,
  input: SettingsInput,
  profile: Record<string, unknown> = {},
) {
  const parsed = ContextSchema.parse(layered(ContextSchema, input, { profile }));
  // LangGraph's context type wants every key present, optional ones as explicit undefined.
  const context = settingsContext(ContextSchema, parsed, {
    ...parsed,
    ollamaUrl: parsed.ollamaUrl,
    baseUrl: parsed.baseUrl,
    apiKey: parsed.apiKey,
    checkCommand: parsed.checkCommand,
  });
  return {
    configurable: { thread_id: threadId },
    context,
    recursionLimit: recursionLimitFor(context),
    // Each step is on disk before the next starts: a killed run resumes from its last step. (Commands
    // are also journaled in the store, so one cut off between its effect and its checkpoint is
    // never run twice.)
    durability: "sync" as const,
  };
}

/** How the run isolates its commands, from the run settings. */
export function isolationOf(s: Settings): Isolation {
  return {
    grants: { allowRead: s.allowRead, allowWrite: s.allowWrite, allowHosts: s.allowHosts },
    unsandboxed: s.runCommandsUnsandboxed,
  };
}

/** The approval rules from the run settings. */
export function rulesOf(s: Settings): Rules {
  return { allow: s.allowRules, ask: s.askRules, deny: s.denyRules };
}

/** The loop guard's settings from the run settings. */
export function loopSettingsOf(s: Settings): LoopSettings {
  return {
    repeat: {
      explore: s.loopRepeatExplore,
      mutate: s.loopRepeatMutate,
      command: s.loopRepeatCommand,
    },
    windowCount: s.loopWindowCount,
    windowSize: s.loopWindowSize,
    cycles: s.loopCycles,
    noProgress: s.loopNoProgress,
    wobble: s.loopWobble,
  };
}
