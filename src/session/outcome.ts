/**
 * What a `keel run` reports when it stops: the outcome the CLI prints (for people, or as JSON), read
 * from the thread's state. Pure.
 */
import { callCount, callRecords, notesOf } from "../coder/call-tally.js";
import { NO_TURNS, type TurnUsage } from "../coder/turn-sums.js";
import type { CoderStateValue, CoderStatus, IntentResult } from "../coder/state.js";

/**
 * How a session ended: the run's status once it stopped, an error that stopped it, or a person
 * (Ctrl-C) or the system (SIGTERM, a closed pipe) that stopped it before it finished.
 */
export type RunStatus = Exclude<CoderStatus, "running"> | "error" | "interrupted";

export interface RunOutcome {
  status: RunStatus;
  intent: string | null;
  /** What decided the intent: the rules, or the model when the rules were unsure. */
  intent_source: IntentResult["source"] | null;
  thread_id: string;
  turns: number;
  tool_calls: Array<{ name: string; ok: boolean }>;
  files_written: string[];
  summary: string;
  /** Each model turn's tokens as the server reported them (absent where it reported none). */
  usage: { turns: TurnUsage[]; promptTokens: number; newTokens: number; generatedTokens: number };
  error?: string;
  /** `.mcp.json` servers not started because no person approved them, and how to approve them. */
  mcp_unapproved?: { servers: string[]; approve: string };
  /**
   * What went wrong this run, by kind: failed tool calls (`tool` named; kinds as tools report them,
   * e.g. not_found), the model turns recovery handled (empty, prose, unmet …), and a model server
   * failure (`stage: "server"`). Empty for a run without a failure.
   */
  failures: Array<{
    stage: "tool" | "turn" | "server";
    kind: string;
    count: number;
    tool?: string;
  }>;
  /**
   * What a person should know that the status does not say: a run done whose last command failed
   * (the model's answer may not reflect it), or whose last change failed its check (settings
   * `checkCommand`). Absent when there is nothing.
   */
  warnings?: string[];
  /** The settings in force (secrets left out). */
  settings: Record<string, unknown>;
  /** 0 done, 1 not completed, 3 the model server failed, 130 interrupted (Ctrl-C, SIGTERM). */
  exitCode: 0 | 1 | 3 | 130;
  /**
   * The summary is the model's last reply, which the timeline showed in full as it streamed: the
   * report for people does not print it twice. Not part of the JSON outcome.
   */
  answerShown?: true;
}

/** The usage of this run's turns: the AI messages after the run's request. */
function usageOf(values: CoderStateValue | undefined): RunOutcome["usage"] {
  const messages = values?.messages ?? [];
  let from = messages.length;
  while (
    from > 0 &&
    !(messages[from - 1]!.getType() === "human" && messages[from - 1]!.content === values!.request)
  )
    from--;
  const turns = messages
    .slice(from)
    .map((m) => (m.response_metadata as { keel_usage?: TurnUsage } | undefined)?.keel_usage)
    .filter((u): u is TurnUsage => u !== undefined);
  // The run's turns moved out of the conversation count in the sums (history/archive.ts).
  const moved = values?.movedTurns ?? NO_TURNS;
  const sum = (k: "promptTokens" | "newTokens" | "generatedTokens") =>
    turns.reduce((a, u) => a + u[k], moved[k]);
  return {
    turns,
    promptTokens: sum("promptTokens"),
    newTokens: sum("newTokens"),
    generatedTokens: sum("generatedTokens"),
  };
}

/**
 * The run's calls in order, from the trail while it holds them all (its newest `TRAIL_WINDOW`);
 * of a longer run, every call from the tally, by tool.
 */
function toolCallsOf(values: CoderStateValue | undefined): RunOutcome["tool_calls"] {
  const trail = values?.trail ?? [];
  const tally = values?.callTally ?? {};
  if (callCount(tally) <= trail.length) return trail.map((t) => ({ name: t.name, ok: t.ok }));
  return callRecords(tally).map((c) => ({ name: c.tool, ok: c.ok }));
}

/** The run's failures by kind (see `RunOutcome.failures`). */
function failuresOf(values: CoderStateValue | undefined): RunOutcome["failures"] {
  const out: RunOutcome["failures"] = [];
  for (const [t, n] of notesOf(values?.callTally ?? {})) {
    if (t.ok) continue;
    const kind = t.kind ?? "tool_error";
    const same = out.find((f) => f.tool === t.tool && f.kind === kind);
    if (same) same.count += n;
    else out.push({ stage: "tool", kind, count: n, tool: t.tool });
  }
  for (const [kind, count] of Object.entries(values?.strikes ?? {}))
    if (count > 0) out.push({ stage: "turn", kind, count });
  return out;
}

/** Settings a script may want to see, without secrets (the API key, MCP servers' env and headers). */
export function settingsShown(context: Record<string, unknown>): Record<string, unknown> {
  const { apiKey, mcpServers, ...rest } = context;
  return {
    ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
    ...(apiKey ? { apiKey: "(set)" } : {}),
    mcpServers: Object.keys((mcpServers as Record<string, unknown> | undefined) ?? {}),
  };
}

/** The warnings of a run that ended (see `RunOutcome.warnings`). */
function warningsOf(values: CoderStateValue | undefined, status: RunStatus): string[] {
  if (status !== "done") return [];
  const out: string[] = [];
  const command = values?.trail.findLast((t) => t.toolClass === "command");
  if (command && !command.ok && command.kind !== "needs_approval")
    out.push(
      `the last command the model ran failed (${command.kind ?? "tool_error"}); check the answer against it`,
    );
  const change = values?.trail.findLast((t) => t.toolClass === "mutate" && t.ok);
  if (change?.checkFailed)
    out.push(
      `the check after the last change${change.target ? ` (${change.target})` : ""} failed; the change stands`,
    );
  return out;
}

export function outcome(
  values: CoderStateValue | undefined,
  threadId: string,
  status: RunStatus,
  question?: string,
): RunOutcome {
  const summary = question ? `Waiting for a person: ${question}` : (values?.summary ?? "");
  const warnings = warningsOf(values, status);
  return {
    status,
    intent: values?.intent?.intent ?? null,
    intent_source: values?.intent?.source ?? null,
    thread_id: threadId,
    turns: values?.turns ?? 0,
    tool_calls: toolCallsOf(values),
    files_written: values?.filesWritten ?? [],
    summary,
    usage: usageOf(values),
    failures: failuresOf(values),
    ...(warnings.length ? { warnings } : {}),
    settings: {},
    exitCode: status === "done" ? 0 : status === "error" ? 3 : status === "interrupted" ? 130 : 1,
  };
}
