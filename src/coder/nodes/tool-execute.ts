import { callCount, noteOf } from "../call-tally.js";
import { ToolMessage, type ToolCall } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { clipResult, toolResultLimit } from "../../guard/context-budget.js";
import { detectLoop, loopHint, type TrailEntry } from "../../guard/loop.js";
import { callParts, callSignature, resultHash } from "../../guard/signature.js";
import { CallJournal, INTERRUPTED_CALL, settleOrphan } from "../../persistence/journal.js";
import type { GraphDeps } from "../../run/model.js";
import { EXACT_COUNT_FROM } from "../../models/token-count.js";
import { checkArgs, toolsForIntent, unknownTool } from "../../tools/registry.js";
import { withCheck } from "../../tools/post-edit.js";
import { STOPPED_WITH_KEEL } from "../../tools/run-command.js";
import { fail, type KeelTool, type ToolContext, type ToolResult } from "../../tools/types.js";
import { recordStep } from "../../undo/record.js";
import { isolationOf, loopSettingsOf } from "../context.js";
import { unansweredCalls } from "../conversation.js";
import { nodeEnv, type NodeEnv } from "../runtime.js";
import type { CoderStateUpdate, CoderStateValue, Failure } from "../state.js";
import { changePreview, fileChangeOf } from "./file-change.js";
import { callFacts, checkAllowed, describeCall, gate } from "./tool-gate.js";

/**
 * Runs ONE unanswered tool call of the last reply and answers it with a ToolMessage carrying its
 * tool_call_id, name and status. One call per step means each result is checkpointed as soon as it
 * exists, so a resumed run never repeats a call that already has its answer. The steps, each its
 * own function: resolve (the tool, the arguments validated — act's one repair pass has run: its
 * notes come from `replyNotes` —, the budget) → guard (the loop detectors: a loop is answered with a hint, the same loop again
 * escalates to `recover`) → gate (approval mode and rules, tool-gate.ts) → run once (commands
 * journaled across crashes) → answer (the tool message, the trail, the error streak). Never throws
 * into the graph except to interrupt for an approval.
 */
export function createToolExecuteNode(deps: GraphDeps) {
  return async (
    state: CoderStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<CoderStateUpdate> => {
    const pending = unansweredCalls(state.messages);
    const call = pending[0];
    if (!call) return {};
    const env = nodeEnv(config, deps);
    // Results are cut to the run's window: the model's, not only the one asked for.
    const { window, counter } = await env.fit();
    const update: CoderStateUpdate = {};
    const step = resolve(call, state, env, await env.mcpTools());
    let result: ToolResult;
    if ("refusal" in step) {
      result = step.refusal;
      if (step.failure) update.failure = step.failure;
    } else {
      const loop = guard(state, step.entry, env);
      if (loop) {
        result = loop.result;
        update.loopHits = loop.loopHits;
        if (loop.failure) update.failure = loop.failure;
      } else {
        const facts = callFacts(step.tool, step.args, step.entry, env.workspace);
        const ctx = toolContext(state, step.entry, env, config, window);
        const gated = gate(
          facts,
          env,
          changePreview(step.tool, step.args),
          fileChangeOf(step.tool, step.args),
          await step.tool.declare?.(step.args, ctx),
        );
        result = gated.run
          ? await runOnce(step, describeCall(facts), state, env, config, {
              ...ctx,
              approved: gated.approved,
              ...(gated.gitWritable ? { gitWritable: true } : {}),
            })
          : gated.result;
      }
      if (step.entry.repaired) result = withNote(result, step.entry.repaired);
    }
    const unread = call.id ? state.replyNotes?.[call.id]?.unread : undefined;
    if (unread) result = prepend(result, `${unread}\n`);
    return answer(state, call, step.entry, result, update, pending.length, env, window, (text) =>
      // A big result is counted by the server's own tokenizer where it has one (one request each).
      counter && text.length >= EXACT_COUNT_FROM ? counter(text, config.signal) : undefined,
    );
  };
}

type Resolved =
  | { entry: TrailEntry; tool: KeelTool; args: unknown }
  | { entry: TrailEntry; refusal: ToolResult; failure?: Failure };

/**
 * The tool and arguments a call means, or why it cannot run (budget, unknown tool, bad
 * arguments). The call is as act's one repair pass left it (tools/call-repair.ts); what the pass
 * repaired is in `replyNotes`.
 */
function resolve(
  call: ToolCall,
  state: CoderStateValue,
  env: NodeEnv,
  mcp: readonly KeelTool[],
): Resolved {
  const entry: TrailEntry = {
    // act gives every call an id (conversation.ts); an id-less call from elsewhere still gets one
    id: call.id ?? `call_${callCount(state.callTally)}`,
    name: call.name,
    signature: callSignature(call.name, call.args),
    toolClass: "unknown",
    ok: false,
  };
  const max = env.settings.maxToolCalls;
  if (callCount(state.callTally) >= max)
    return {
      entry,
      refusal: fail("refused", `the tool-call budget (${max}) is spent; this call was not run.`),
      failure: { kind: "budget", detail: `the tool-call budget (${max} calls) is spent` },
    };
  const offered = toolsForIntent(
    state.intent?.intent ?? "build",
    mcp,
    env.settings.approval === "plan",
  );
  const tool = offered.find((t) => t.name === call.name);
  if (!tool) return { entry, refusal: fail("unknown_tool", unknownTool(call.name, offered)) };
  const valid = checkArgs(tool, call.args);
  const args = valid.ok ? valid.value : call.args;
  const repaired = call.id ? state.replyNotes?.[call.id]?.repaired : undefined;
  const resolved: TrailEntry = {
    ...entry,
    signature: callSignature(tool.name, args),
    toolClass: tool.toolClass,
    ...callParts(tool.name, args),
    ...(repaired ? { repaired } : {}),
  };
  if (!valid.ok)
    return {
      entry: resolved,
      refusal: withNote(fail("invalid_arguments", valid.message), repaired ?? ""),
    };
  return { entry: resolved, tool, args };
}

/** The loop guard's verdict on a call about to run: undefined to run it, else the hint to answer. */
function guard(state: CoderStateValue, entry: TrailEntry, env: NodeEnv) {
  const loop = detectLoop(state.trail, entry, loopSettingsOf(env.settings));
  if (!loop) return undefined;
  const hits = (state.loopHits[loop.key] ?? 0) + 1;
  return {
    result: fail("loop", loopHint(loop, lastOutputOf(state, entry.signature))),
    loopHits: { ...state.loopHits, [loop.key]: hits },
    failure:
      hits >= 2
        ? {
            kind: "loop" as const,
            detail: `${loop.detector} loop on ${loop.calls.join(" → ")} (hit ${hits} times)`,
          }
        : undefined,
  };
}

/** What a tool is given of the run (the gate's verdict is added to it for the call that runs). */
function toolContext(
  state: CoderStateValue,
  entry: TrailEntry,
  env: NodeEnv,
  config: LangGraphRunnableConfig,
  window: number,
): ToolContext {
  return {
    workspace: env.workspace,
    signal: config.signal,
    isolation: isolationOf(env.settings),
    commandTimeoutMs: env.settings.commandTimeoutMs,
    toolTimeoutMs: env.settings.toolTimeoutMs,
    outputLimit: toolResultLimit(window),
    seen: state.seen,
    failuresOnTarget: state.trail.filter(
      (t) => t.name === entry.name && !t.ok && t.target === entry.target,
    ).length,
  };
}

/**
 * Runs the call the gate allowed, at most once across crashes for commands: the side-effect journal
 * in the store says whether it already ran (its result), started and was cut off (the model is
 * told), or never ran. A changing call runs between undo snapshots, and a file change is followed by
 * the check command.
 */
async function runOnce(
  { tool, args, entry }: { tool: KeelTool; args: unknown; entry: TrailEntry },
  label: string,
  state: CoderStateValue,
  env: NodeEnv,
  config: LangGraphRunnableConfig,
  allowed: ToolContext,
): Promise<ToolResult> {
  const callId = entry.id;
  const thread = String(config.configurable?.thread_id ?? "");
  const journal =
    tool.toolClass === "command" && config.store
      ? new CallJournal(config.store, thread)
      : undefined;
  const before = await journal?.get(callId);
  if (before?.state === "done") return before.result;
  if (before?.state === "started") {
    const orphan = await settleOrphan(before, env.settings.commandTimeoutMs);
    const note = {
      none: "",
      ended: " (It was still running after the restart; keel waited for it to end.)",
      stopped: " (It was still running past its time limit after the restart; keel stopped it.)",
    }[orphan];
    return fail("interrupted", INTERRUPTED_CALL + note);
  }
  await journal?.start(callId);
  let recordPid: Promise<void> | undefined;
  const ctx: ToolContext = {
    ...allowed,
    onSpawn: (pid) => {
      recordPid = journal?.spawned(callId, pid);
    },
  };
  const run = () => tool.run(args, ctx);
  // keel stopped (Ctrl-C, SIGTERM) while the command runs: recorded at once, as the process may end
  // before the command's own end is seen; a resume then tells the model what stopped it
  const onStop = () => void journal?.finish(callId, fail("interrupted", STOPPED_WITH_KEEL));
  if (journal) config.signal?.addEventListener("abort", onStop, { once: true });
  let result: ToolResult;
  try {
    result =
      tool.toolClass !== "explore" && env.settings.undo && thread
        ? await recordStep(
            {
              workspace: env.workspace,
              thread,
              callId,
              messages: state.archived + state.messages.length,
              label,
              paths: tool.touches?.(args as never, env.workspace),
            },
            run,
            (detail) => env.emit({ type: "undo-unavailable", detail }),
          )
        : await run();
  } catch (err) {
    // Paused for approval before anything ran: the call is not "started".
    await journal?.clear(callId);
    throw err;
  } finally {
    config.signal?.removeEventListener("abort", onStop);
  }
  await recordPid; // the "done" record must land after the pid record
  // stopped with keel: its record landed when it was stopped, and the store may be closed by now
  if (!config.signal?.aborted) await journal?.finish(callId, result);
  const check = env.settings.checkCommand;
  return check && tool.toolClass === "mutate"
    ? withCheck(result, check, ctx, checkAllowed(env, ctx))
    : result;
}

/**
 * The tool message answering the call, and what the trail, the streak and `recover` learn from it.
 * `count` gives the server's own count of the message's text, where it has one (`keel_tokens`).
 */
async function answer(
  state: CoderStateValue,
  call: ToolCall,
  resolved: TrailEntry,
  result: ToolResult,
  update: CoderStateUpdate,
  pending: number,
  env: NodeEnv,
  window: number,
  count: (text: string) => Promise<number | undefined> | undefined,
): Promise<CoderStateUpdate> {
  const text = clipResult(
    result.ok ? result.output : `Error [${result.kind}]: ${result.message}`,
    window,
  );
  const entry: TrailEntry = {
    ...resolved,
    ok: result.ok,
    ...(result.ok ? {} : { kind: result.kind }),
    ...(result.ok && result.checkFailed ? { checkFailed: true as const } : {}),
    ...(result.ok || result.kind !== "loop" ? { result: resultHash(text) } : {}),
  };
  const streak = result.ok ? 0 : state.errorStreak + 1;
  const tokens = await count(text);
  update.messages = [
    new ToolMessage({
      content: text,
      tool_call_id: entry.id,
      name: call.name,
      status: result.ok ? "success" : "error",
      ...(tokens ? { response_metadata: { keel_tokens: tokens } } : {}),
    }),
  ];
  update.trail = entry;
  update.callTally = noteOf(entry);
  if (streak !== state.errorStreak) update.errorStreak = streak;
  if (result.ok && result.filesWritten) update.filesWritten = result.filesWritten;
  if (result.ok && result.seen) update.seen = result.seen;
  if (!update.failure && pending === 1 && streak >= env.settings.errorStreak) {
    const recent = [...state.trail, entry].slice(-streak);
    update.failure = {
      kind: streakKind(recent),
      detail: `${streak} tool calls in a row failed: ${recent.map((t) => `${t.name} (${t.kind})`).join(", ")}`,
    };
  }
  return update;
}

/** A result with keel's repairs said first, so the model learns the right form. */
function withNote(result: ToolResult, repaired: string | string[]): ToolResult {
  const notes = Array.isArray(repaired) ? repaired.join("; ") : repaired;
  return notes ? prepend(result, `(keel repaired the call: ${notes})\n`) : result;
}

/** The result with `note` in front of its output or error message. */
function prepend(result: ToolResult, note: string): ToolResult {
  return result.ok
    ? { ...result, output: note + result.output }
    : { ...result, message: note + result.message };
}

/** The failure kind of an error streak: the one all its errors share, else tool_error. */
function streakKind(entries: TrailEntry[]): Failure["kind"] {
  const kinds = new Set(entries.map((t) => t.kind));
  if (kinds.size === 1 && kinds.has("unknown_tool")) return "unknown_tool";
  if (kinds.size === 1 && kinds.has("invalid_arguments")) return "invalid_arguments";
  return "tool_error";
}

/** The result text of the latest run of this call, for a loop hint that shows the model what it has. */
function lastOutputOf(state: CoderStateValue, signature: string): string | undefined {
  const last = [...state.trail].reverse().find((t) => t.signature === signature && t.result);
  if (!last) return undefined;
  const msg = state.messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === last.id);
  return msg && typeof msg.content === "string" ? msg.content : undefined;
}
