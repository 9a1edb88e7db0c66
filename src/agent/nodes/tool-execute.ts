import { AIMessage, ToolMessage, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { clipMiddle, toolResultLimit } from "../../guard/context-budget.js";
import { detectLoop, loopHint, type TrailEntry } from "../../guard/loop.js";
import { callParts, callSignature, resultHash } from "../../guard/signature.js";
import { lookupTool, toolsForIntent, validateArgs } from "../../tools/registry.js";
import { CallJournal, INTERRUPTED_CALL, settleOrphan } from "../../persistence/journal.js";
import { fail, type Approver, type KeelTool, type ToolResult } from "../../tools/types.js";
import { loopSettingsOf } from "../context.js";
import { nodeEnv, type NodeEnv } from "../runtime.js";
import { type GraphDeps } from "../../run/model.js";
import type { CoderStateUpdate, CoderStateValue, Failure } from "../state.js";

/** The calls of the newest assistant message that have no tool message yet, in call order. */
export function unansweredCalls(messages: readonly BaseMessage[]): ToolCall[] {
  const answered = new Set<string>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (ToolMessage.isInstance(m)) answered.add(m.tool_call_id);
    else if (AIMessage.isInstance(m))
      return (m.tool_calls ?? []).filter((c) => !c.id || !answered.has(c.id));
  }
  return [];
}

function approver(env: NodeEnv): Approver {
  return (req) => {
    if (env.settings.autoApprove) return true;
    if (!env.settings.interactive) return false;
    const answer: unknown = interrupt({
      type: "approval",
      ...req,
      question: `Allow \`${req.command}\`? (${req.reason})`,
    });
    const approved =
      answer === true || (typeof answer === "string" && /^y(es)?$/i.test(answer.trim()));
    env.emit({ type: "approval", command: req.command, approved });
    return approved;
  };
}

/** The failure kind of an error streak: the one all its errors share, else tool_error. */
function streakKind(entries: TrailEntry[]): Failure["kind"] {
  const kinds = new Set(entries.map((t) => t.kind));
  if (kinds.size === 1 && kinds.has("unknown_tool")) return "unknown_tool";
  if (kinds.size === 1 && kinds.has("invalid_arguments")) return "invalid_arguments";
  return "tool_error";
}

/** Runs a tool with the run's context (tools turn their own errors into failures). */
function runTool(
  tool: KeelTool,
  args: unknown,
  env: NodeEnv,
  config: LangGraphRunnableConfig,
  onSpawn?: (pid: number) => void,
): Promise<ToolResult> {
  return tool.run(args, {
    workspace: env.workspace,
    signal: config.signal,
    approve: approver(env),
    commandTimeoutMs: env.settings.commandTimeoutMs,
    outputLimit: toolResultLimit(env.settings.contextWindow),
    ...(onSpawn ? { onSpawn } : {}),
  });
}

/**
 * Runs ONE unanswered tool call of the last reply and answers it with a ToolMessage carrying its
 * tool_call_id, name and status. One call per step means each result is checkpointed as soon as it
 * exists, so a resumed run never repeats a call that already has its answer. Before running, the
 * call is repaired if that is unambiguous, validated, and checked by the loop guard (a loop is
 * answered with a hint instead of a result; the same loop again escalates to `recover`). Never
 * throws into the graph except to interrupt for an approval.
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
    const callId = call.id ?? `call_${state.trail.length}`;
    const tools = toolsForIntent(state.intent?.intent ?? "build");
    const update: CoderStateUpdate = {};
    let entry: TrailEntry = {
      id: callId,
      name: call.name,
      signature: callSignature(call.name, call.args),
      toolClass: "unknown",
      ok: false,
    };
    let result: ToolResult;

    const found = lookupTool(call.name, call.args, tools);
    if (state.trail.length >= env.settings.maxToolCalls) {
      result = fail(
        "refused",
        `the tool-call budget (${env.settings.maxToolCalls}) is spent; this call was not run.`,
      );
      update.failure = {
        kind: "budget",
        detail: `the tool-call budget (${env.settings.maxToolCalls} calls) is spent`,
      };
    } else if (!found.found) {
      result = fail("unknown_tool", found.message);
    } else {
      const tool = found.tool;
      const valid = validateArgs(tool, found.args);
      const args = valid.ok ? valid.value : found.args;
      const notes = [...found.notes, ...(valid.ok ? valid.notes : [])];
      entry = {
        ...entry,
        name: tool.name,
        signature: callSignature(tool.name, args),
        toolClass: tool.toolClass,
        ...callParts(tool.name, args),
        ...(notes.length ? { repaired: notes.join("; ") } : {}),
      };
      const loop = valid.ok
        ? detectLoop(state.trail, entry, loopSettingsOf(env.settings))
        : undefined;
      if (!valid.ok) {
        result = fail("invalid_arguments", valid.message);
      } else if (loop) {
        const hits = (state.loopHits[loop.key] ?? 0) + 1;
        update.loopHits = { ...state.loopHits, [loop.key]: hits };
        result = fail("loop", loopHint(loop, lastOutputOf(state, entry.signature)));
        if (hits >= 2)
          update.failure = {
            kind: "loop",
            detail: `${loop.detector} loop on ${loop.calls.join(" → ")} (hit ${hits} times)`,
          };
      } else {
        const journal =
          tool.toolClass === "command" && config.store
            ? new CallJournal(config.store, String(config.configurable?.thread_id ?? ""))
            : undefined;
        const before = await journal?.get(callId);
        if (before?.state === "done") {
          result = before.result;
        } else if (before?.state === "started") {
          const orphan = await settleOrphan(before, env.settings.commandTimeoutMs);
          const note = {
            none: "",
            ended: " (It was still running after the restart; keel waited for it to end.)",
            stopped:
              " (It was still running past its time limit after the restart; keel stopped it.)",
          }[orphan];
          result = fail("interrupted", INTERRUPTED_CALL + note);
        } else {
          await journal?.start(callId);
          let recordPid: Promise<void> | undefined;
          try {
            result = await runTool(tool, valid.value, env, config, (pid) => {
              recordPid = journal?.spawned(callId, pid);
            });
          } catch (err) {
            // Paused for approval before anything ran: the call is not "started".
            await journal?.clear(callId);
            throw err;
          }
          await recordPid; // the "done" record must land after the pid record
          await journal?.finish(callId, result);
        }
      }
      if (entry.repaired) {
        const note = `(keel repaired the call: ${entry.repaired})\n`;
        result = result.ok
          ? { ...result, output: note + result.output }
          : { ...result, message: note + result.message };
      }
    }

    const text = clipMiddle(
      result.ok ? result.output : `Error [${result.kind}]: ${result.message}`,
      toolResultLimit(env.settings.contextWindow),
    );
    entry = {
      ...entry,
      ok: result.ok,
      ...(result.ok ? {} : { kind: result.kind }),
      ...(result.ok || result.kind !== "loop" ? { result: resultHash(text) } : {}),
    };
    const streak = result.ok ? 0 : state.errorStreak + 1;
    update.messages = [
      new ToolMessage({
        content: text,
        tool_call_id: callId,
        name: call.name,
        status: result.ok ? "success" : "error",
      }),
    ];
    update.trail = entry;
    if (streak !== state.errorStreak) update.errorStreak = streak;
    if (result.ok && result.filesWritten) update.filesWritten = result.filesWritten;
    if (!update.failure && pending.length === 1 && streak >= env.settings.errorStreak) {
      const recent = [...state.trail, entry].slice(-streak);
      update.failure = {
        kind: streakKind(recent),
        detail: `${streak} tool calls in a row failed: ${recent.map((t) => `${t.name} (${t.kind})`).join(", ")}`,
      };
    }
    return update;
  };
}

/** The result text of the latest run of this call, for a loop hint that shows the model what it has. */
function lastOutputOf(state: CoderStateValue, signature: string): string | undefined {
  const last = [...state.trail].reverse().find((t) => t.signature === signature && t.result);
  if (!last) return undefined;
  const msg = state.messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === last.id);
  return msg && typeof msg.content === "string" ? msg.content : undefined;
}
