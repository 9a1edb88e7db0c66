import { AIMessage, ToolMessage, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import { interrupt, isGraphInterrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { checkRepeat, loopHint, type TrailEntry } from "../../guard/loop.js";
import { callSignature } from "../../guard/signature.js";
import { lookupTool, toolsForIntent, validateArgs } from "../../tools/registry.js";
import { fail, type Approver, type ToolResult } from "../../tools/types.js";
import { nodeEnv, type GraphDeps, type NodeEnv } from "../runtime.js";
import type { CoderStateUpdate, CoderStateValue } from "../state.js";

const OUTPUT_LIMIT = 16_000;

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

function resultText(r: ToolResult): string {
  return r.ok ? r.output : `Error [${r.kind}]: ${r.message}`;
}

/**
 * Runs ONE unanswered tool call of the last reply and answers it with a ToolMessage carrying its
 * tool_call_id, name and status. One call per step means each result is checkpointed as soon as it
 * exists, so a resumed run never repeats a call that already has its answer. Never throws into
 * the graph except to interrupt for an approval.
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
      const notes = [...found.notes, ...(valid.ok ? valid.notes : [])];
      entry = {
        ...entry,
        name: tool.name,
        signature: callSignature(tool.name, valid.ok ? valid.value : found.args),
        toolClass: tool.toolClass,
        ...(notes.length ? { repaired: notes.join("; ") } : {}),
      };
      const repeat = checkRepeat(state.trail, entry.signature, tool.toolClass);
      if (!valid.ok) {
        result = fail("invalid_arguments", valid.message);
      } else if (repeat.hit) {
        const hits = state.loopHits + 1;
        update.loopHits = hits;
        result = fail(
          "loop",
          loopHint(tool.name, entry.signature, repeat.repeats, lastOutputOf(state)),
        );
        if (hits >= 2)
          update.failure = {
            kind: "loop",
            detail: `${entry.signature} was called ${repeat.repeats} times in a row after a loop warning`,
          };
      } else {
        try {
          result = await tool.run(valid.value, {
            workspace: env.workspace,
            signal: config.signal,
            approve: approver(env),
            commandTimeoutMs: env.settings.commandTimeoutMs,
            outputLimit: OUTPUT_LIMIT,
          });
        } catch (err) {
          if (isGraphInterrupt(err)) throw err;
          result = fail(
            "failed",
            `${tool.name} failed: ${(err as Error).message}. Check the arguments (does the path exist? is it a file or a folder?) and try again differently.`,
          );
        }
      }
      if (entry.repaired) {
        const note = `(keel repaired the call: ${entry.repaired})\n`;
        result = result.ok ? { ...result, output: note + result.output } : { ...result, message: note + result.message };
      }
    }

    entry = { ...entry, ok: result.ok, ...(result.ok ? {} : { kind: result.kind }) };
    const streak = result.ok ? 0 : state.errorStreak + 1;
    update.messages = [
      new ToolMessage({
        content: resultText(result),
        tool_call_id: callId,
        name: call.name,
        status: result.ok ? "success" : "error",
      }),
    ];
    update.trail = entry;
    update.errorStreak = streak;
    if (result.ok && result.filesWritten) update.filesWritten = result.filesWritten;
    const lastOfReply = pending.length === 1;
    if (!update.failure && lastOfReply && streak >= env.settings.errorStreak) {
      const recent = [...state.trail, entry].slice(-streak).map((t) => `${t.name} (${t.kind})`);
      update.failure = {
        kind: "tool_error",
        detail: `${streak} tool calls in a row failed: ${recent.join(", ")}`,
      };
    }
    return update;
  };
}

/** The result text of the previous call, for a loop hint that shows the model what it already has. */
function lastOutputOf(state: CoderStateValue): string | undefined {
  const last = state.trail[state.trail.length - 1];
  if (!last) return undefined;
  const msg = state.messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === last.id);
  return msg && typeof msg.content === "string" ? msg.content : undefined;
}
