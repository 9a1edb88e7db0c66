/**
 * Run settings: one zod schema with defaults, each field described so LangGraph Studio shows help
 * text. Read by every node through `settingsFrom(config)`.
 */
import { z } from "zod";
import { TOOL_MODE_SETTINGS } from "../models/capabilities.js";
import { FORMAT_NAMES } from "../models/tool-calls/types.js";
import { setting, type SettingMeta } from "../run/setting-meta.js";
import {
  layered,
  ModelSettingsSchema,
  parseSettings,
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
/** What only the user's own settings file may set (settings-file.ts). */
const USER_ONLY: SettingMeta = { userOnly: true };

/** The coder's run settings: the shared model settings and the coder's own. */
export const ContextSchema = ModelSettingsSchema.extend({
  workspace: setting(
    z
      .string()
      .default(".")
      .describe("Folder the agent may read and write; every path is confined to it"),
    { location: true },
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
    { flag: "--max-turns <n>", commands: RUN },
  ),
  maxToolCalls: setting(
    z.number().int().min(1).default(120).describe("Most tool calls in one run"),
    { flag: "--max-tool-calls <n>", commands: RUN },
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
      commands: ["run", "eval"],
      flagHelp: "prompt mode's call syntax, e.g. hermes or llama3-json (auto: the model's own)",
      example: "llama3-json",
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
    { flag: "--think-cut <tokens>", commands: ["run", "eval"], example: 512 },
  ),
  interactive: z
    .boolean()
    .default(false)
    .describe(
      "Ask a human (interrupt) for approvals and when recovery runs out, instead of ending",
    ),
  autoApprove: setting(
    z
      .boolean()
      .default(false)
      .describe(
        "Answer yes to every approval question (the CLI's --yes), except running a command without the OS sandbox",
      ),
    {
      flag: "-y, --yes",
      commands: RUN,
      flagHelp:
        "answer yes to every approval question (commands beyond the workspace, --approval ask|edits); deny rules and running unsandboxed still refuse",
      ...USER_ONLY,
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
      ...USER_ONLY,
    },
  ),
  allowRules: setting(
    RuleList.describe(
      "Calls that run without asking, as tool or tool(pattern): edit_file(src/**), run_command(npm test*). User settings only",
    ),
    { ...USER_ONLY, example: ["run_command(npm test*)"] },
  ),
  askRules: setting(
    RuleList.describe(
      "Calls a person is asked about in every mode but plan, e.g. run_command(git push*), write_file(*.lock)",
    ),
    { additive: true, example: ["run_command(git push*)"] },
  ),
  denyRules: setting(
    RuleList.describe(
      "Calls refused in every mode, even with --yes, e.g. run_command(rm -rf*), *(.env), edit_file(migrations/**)",
    ),
    { additive: true, example: ["run_command(rm -rf*)"] },
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
    },
  ),
  learnDescriptions: z
    .boolean()
    .default(true)
    .describe(
      "Learn from misuse: a tool this model misused the same way in several threads gets one line of right-vs-wrong usage in its description (kept while it lowers the misuse rate; see keel stats)",
    ),
  // user-only: a project's file must not take away the person's way back
  undo: setting(
    z
      .boolean()
      .default(true)
      .describe(
        "Snapshot the files each changing step touches (a shadow git repository in .keel/undo), for keel undo and keel diff",
      ),
    USER_ONLY,
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
      ...USER_ONLY,
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
      ...USER_ONLY,
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
      ...USER_ONLY,
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
      ...USER_ONLY,
    },
  ),
  mcpServers: setting(
    McpServersSchema.default({}).describe(
      "MCP servers whose tools the agent may use, in the mcpServers shape (command/args/env or url/headers; includeTools, excludeTools, timeout, trust); the workspace's .mcp.json adds its own (never trusted)",
    ),
    { ...USER_ONLY, example: { files: { command: "mcp-files" } } },
  ),
  commandTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(120_000)
    .describe("Default time limit of run_command"),
  errorStreak: z
    .number()
    .int()
    .min(1)
    .default(3)
    .describe("Consecutive failed tool calls that trigger recovery"),
  recoveryHints: z
    .number()
    .int()
    .min(0)
    .default(1)
    .describe(
      "Recovery ladder: strikes of one failure kind answered with a hint before re-planning",
    ),
  recoveryReplans: z
    .number()
    .int()
    .min(0)
    .default(1)
    .describe(
      "Recovery ladder: re-plans before the forced summary turn and the end (or asking a human)",
    ),
  loopRepeatExplore: z
    .number()
    .int()
    .min(2)
    .default(3)
    .describe("Loop guard: identical read-only calls in a row that make a loop"),
  loopRepeatMutate: z
    .number()
    .int()
    .min(2)
    .default(2)
    .describe("Loop guard: identical file-changing calls in a row that make a loop"),
  loopRepeatCommand: z
    .number()
    .int()
    .min(2)
    .default(3)
    .describe("Loop guard: identical commands in a row, with identical output, that make a loop"),
  loopWindowCount: z
    .number()
    .int()
    .min(2)
    .default(4)
    .describe("Loop guard: the same call this many times among the last loopWindowSize calls"),
  loopWindowSize: z
    .number()
    .int()
    .min(3)
    .default(12)
    .describe("Loop guard: how many recent calls the window detectors look at"),
  loopCycles: z
    .number()
    .int()
    .min(2)
    .default(3)
    .describe("Loop guard: full A-B-A-B (or A-B-C) cycles that make a loop"),
  loopNoProgress: z
    .number()
    .int()
    .min(2)
    .default(3)
    .describe("Loop guard: the same call returning the same result this many times"),
  loopWobble: z
    .number()
    .int()
    .min(3)
    .default(5)
    .describe(
      "Loop guard: the same tool on the same target with slightly changed arguments, this many times in a row",
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
 * limit. `beneath`: the model's calibration profile, under every other source (run/profile-use.ts).
 */
export function runConfig(
  threadId: string,
  input: SettingsInput,
  beneath: Record<string, unknown> = {},
) {
  const parsed = ContextSchema.parse(layered(ContextSchema, input, beneath));
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
