/**
 * The live timeline: one line per event of a run (node, tool call, error fed back, guard hit).
 * Pure formatting of LangGraph `updates` / `custom` chunks; the caller decides where lines go.
 */
import type { TurnUsage } from "../coder/turn-sums.js";
import { printable, printableName } from "../printable.js";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import pc from "picocolors";
import { END } from "@langchain/langgraph";
import { NODE, recoverGoesTo } from "../coder/routing.js";
import type { KeelEvent } from "../coder/runtime.js";
import type { CoderStateUpdate, Failure } from "../coder/state.js";
import { createStreamFilter } from "./stream-filter.js";

/**
 * Text of the run on one line, at most `n` characters, what could hide or reorder it shown as codes
 * (`printable`): a tool's output, an argument or a file name is the model's or a file's, not keel's.
 */
const short = (s: string, n = 100) => {
  const one = s.replace(/\s+/g, " ").trim();
  return printable(one.length > n ? `${one.slice(0, n - 1)}…` : one);
};

function argsPreview(args: Record<string, unknown>): string {
  return Object.entries(args)
    .map(
      ([k, v]) =>
        `${k}=${short(typeof v === "string" ? JSON.stringify(v) : (JSON.stringify(v) ?? "undefined"), 40)}`,
    )
    .join(", ");
}

function asList(m: unknown): BaseMessage[] {
  return Array.isArray(m) ? (m as BaseMessage[]) : m ? [m as BaseMessage] : [];
}

/** How the timeline names each failure kind of a turn (one entry per kind of FailureSchema). */
export const FAILURE_LABEL: Record<Failure["kind"], string> = {
  empty: "empty reply",
  prose: "prose instead of action",
  unmet: "final answer without the requested effect",
  unparseable: "a tool call keel could not read",
  cut: "reply cut at its budget or the context's end (not run)",
  repetition: "the model repeats itself",
  budget: "turn budget spent",
  tool_error: "tool error",
  unknown_tool: "unknown tool",
  invalid_arguments: "invalid arguments",
  loop: "loop",
};

/** Lines for one node's update. */
export function describeUpdate(node: string, update: CoderStateUpdate | undefined): string[] {
  if (!update) return [];
  const lines: string[] = [];
  const messages = asList(update.messages);
  switch (node) {
    case NODE.intentClassify:
      if (update.intent)
        lines.push(
          `${pc.cyan("intent")}   ${update.intent.intent} ${pc.dim(`(${update.intent.source}, confidence ${update.intent.confidence.toFixed(2)})`)}`,
        );
      break;
    case NODE.plan:
      lines.push(
        `${pc.cyan("plan")}     ${(update.planSteps ?? []).map((s, i) => `${i + 1}. ${short(s.title, 200)}`).join("  ")}`,
      );
      break;
    case NODE.act:
      return actLines(update, messages);
    case NODE.toolExecute:
      for (const m of messages) {
        if (!ToolMessage.isInstance(m)) continue;
        const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
        if (m.status === "error")
          lines.push(
            `${pc.red("  ✗")} ${printableName(m.name ?? "tool")} ${pc.red(short(text, 140))} ${pc.dim("(fed back to the model)")}`,
          );
        else
          lines.push(
            `${pc.green("  ✓")} ${printableName(m.name ?? "tool")} ${pc.dim(short(text, 100))}`,
          );
      }
      if (update.failure) lines.push(`${pc.yellow("guard")}    ${update.failure.detail}`);
      break;
    case NODE.recover:
      return recoverLines(update, messages);
  }
  return lines;
}

/** Lines for act's update: the channel, the turn's calls or failure, its thinking and usage. */
function actLines(update: CoderStateUpdate, messages: BaseMessage[]): string[] {
  const lines: string[] = [];
  const ai = messages.find((m) => AIMessage.isInstance(m));
  const turn = pc.dim(`turn ${update.turns ?? "?"}`);
  const ch = update.toolChannel;
  if (ch && update.turns === 1) {
    lines.push(
      `${pc.cyan("channel")}  ${ch.mode === "native" ? "native tool calling (the request's tools field)" : `prompt mode: tools described in the system prompt, calls read as ${ch.format}`}`,
    );
  }
  if (ch?.pinned && update.toolChannel?.parseFailures !== undefined)
    lines.push(
      `${pc.yellow("channel")}  the rest of the run describes tools in the prompt: ${short(ch.pinned, 90)}`,
    );
  if (ch?.salvaged)
    lines.push(
      `${pc.yellow("salvage")}  the model wrote its call as text; keel read it as a real call`,
    );
  // the summary turn clears the request for it (a final answer that ends the run does not)
  if (update.summaryFor === null && update.failure?.summarized)
    lines.push(`${pc.cyan("act")}      ${turn} → summary (no tools offered)`);
  else if (update.failure?.kind === "budget")
    lines.push(`${pc.yellow("act")}      ${update.failure.detail}`);
  else if (ai?.tool_calls?.length) {
    for (const c of ai.tool_calls)
      lines.push(
        `${pc.cyan("act")}      ${turn} → ${pc.bold(printableName(c.name))}(${argsPreview(c.args)})`,
      );
  } else if (update.failure)
    lines.push(
      `${pc.yellow("act")}      ${turn} → ${FAILURE_LABEL[update.failure.kind]}${update.failure.kind === "empty" ? "" : `: “${short(ai?.text ?? "", 60)}”`}`,
    );
  else lines.push(`${pc.green("act")}      ${turn} → final answer`);
  const thinking = ai?.additional_kwargs?.reasoning_content;
  if (typeof thinking === "string" && thinking.trim())
    lines.splice(lines.length - 1, 0, pc.dim(`  thinking: ${short(thinking, 160)}`));
  const usage = ai?.response_metadata?.keel_usage as TurnUsage | undefined;
  if (usage) lines.push(pc.dim(`  ${describeUsage(usage)}`));
  return lines;
}

/** Lines for recover's update: where the run goes on, or the hint it gave the model. */
function recoverLines(update: CoderStateUpdate, messages: BaseMessage[]): string[] {
  const lines: string[] = [];
  if (recoverGoesTo(update) === END)
    lines.push(`${pc.yellow("recover")}  stopping: ${short(update.summary ?? "", 120)}`);
  else if (recoverGoesTo(update) === NODE.plan)
    lines.push(`${pc.yellow("recover")}  re-planning: ${short(update.replanReason ?? "", 100)}`);
  else if (update.summaryFor)
    lines.push(
      `${pc.yellow("recover")}  one last turn without tools, for a summary: ${short(update.summaryFor.detail, 80)}`,
    );
  else {
    // keel's note to the model (the update may also carry the turn's own reply or its stubs)
    const note =
      messages.find((m) => typeof m.content === "string" && m.content.startsWith("[keel]")) ??
      messages.find((m) => typeof m.content === "string" && m.content.trim() !== "");
    lines.push(
      `${pc.yellow("recover")}  hint → ${short(typeof note?.content === "string" ? note.content : "", 110)}`,
    );
  }
  return lines;
}

/** What a run waits for after a step's updates: the tool call act asked for, else the model. */
export function waitingAfter(chunk: Record<string, CoderStateUpdate | undefined>): string {
  const calls = asList(chunk[NODE.act]?.messages).flatMap((m) =>
    AIMessage.isInstance(m) ? (m.tool_calls ?? []) : [],
  );
  return calls[0]
    ? `${calls[0].name} to finish`
    : "the model's reply (a long prompt is read first)";
}

/**
 * One turn's tokens: prompt (new vs reused: the server's own cache count, or `~N reused`, keel's
 * estimate, where the server reports none), generated, speed; of a reply keel stopped, keel's
 * counts, said to be.
 */
export function describeUsage(u: TurnUsage): string {
  const n = (x: number) => x.toLocaleString("en-US");
  if (u.countedBy === "keel")
    return `tokens: prompt ~${n(u.promptTokens)} · generated ~${n(u.generatedTokens)} (keel stopped the reply; the server counted none)`;
  const reused = `${u.reusedFrom === "estimate" ? "~" : ""}${n(u.reusedTokens)} reused`;
  return `tokens: prompt ${n(u.promptTokens)} (${n(u.newTokens)} new, ${reused}) · generated ${n(u.generatedTokens)}${u.tokensPerSecond ? ` at ${u.tokensPerSecond} tok/s` : ""}`;
}

/** Lines for a custom event a node emitted. */
export function describeEvent(e: KeelEvent): string[] {
  if (e.type === "retry")
    return [
      `${pc.yellow("retry")}    model request failed (${short(e.error, 90)}); attempt ${e.attempt + 1} in ${e.delayMs} ms`,
    ];
  if (e.type === "compacted") {
    return [
      `${pc.yellow("context")}  compacted ${e.folded} older messages into a record: ~${e.tokensBefore} → ~${e.tokensAfter} tokens (budget ${e.budget}); the prompt's prefix is rewritten once, then only grows`,
    ];
  }
  if (e.type === "truncated" && e.refused)
    return [
      `${pc.yellow("context")}  the server refused a prompt ${e.reported ? `of ${e.reported} tokens ` : ""}as over its context (n_ctx ${e.numCtx}; keel estimated ~${e.estimated}): refitting to its window and asking again`,
    ];
  if (e.type === "truncated")
    return [
      `${pc.yellow("context")}  the server cut the prompt (it saw ${e.reported} tokens under num_ctx ${e.numCtx}; keel estimated ~${e.estimated}): answer discarded, refitting and asking again`,
    ];
  if (e.type === "unshifted")
    return [
      `${pc.yellow("context")}  --cache-reuse does nothing here: the server evaluated the turns a fold kept again (${e.cached} of ~${e.kept} tokens from its cache; llama-server cannot shift this model's cache); folding as usual from now on`,
    ];
  if (e.type === "thought-cut")
    return [
      `${pc.yellow("thinking")} stopped after ~${e.tokens} tokens (--think-cut); the turn goes on without thinking, from the thought so far`,
    ];
  if (e.type === "tool-channel")
    return [
      `${pc.yellow("channel")}  the server's tool channel failed (${short(e.reason, 90)}); ${e.pinned ? "the rest of the run uses" : "this turn is asked again in"} prompt mode`,
    ];
  if (e.type === "mcp-tools")
    return [
      `${pc.cyan("mcp")}      ${e.tools} MCP tools, ~${e.tokens} tokens of schema (${Math.round(e.share * 100)}% of the window)` +
        (e.share > MCP_WARN_SHARE
          ? pc.yellow(
              ` — more than ${MCP_WARN_SHARE * 100}%: small models pick tools worse with many; narrow them with includeTools`,
            )
          : ""),
    ];
  if (e.type === "mcp-unapproved")
    return [
      `${pc.yellow("mcp")}      .mcp.json names ${e.servers.length === 1 ? "a server" : "servers"} no person approved (${short(e.servers.join(", "), 200)}): not started. To start ${e.servers.length === 1 ? "it" : "them"}, review and approve: ${printable(e.approve)}`,
    ];
  if (e.type === "mcp-failed")
    return [
      `${pc.yellow("mcp")}      server "${printableName(e.server)}" (${short(e.target, 60)}) is not available: ${short(e.detail, 200)}; the run goes on without its tools`,
    ];
  if (e.type === "undo-unavailable")
    return [`${pc.yellow("undo")}     ${short(e.detail, 200)}; this step cannot be undone`];
  return [
    `${pc.cyan("approval")} ${short(e.command, 200)}: ${e.approved ? "approved" : "refused"}`,
  ];
}

/** MCP tools may take at most this share of the window before the timeline warns. */
export const MCP_WARN_SHARE = 0.25;

/**
 * Shows a model's reply as it streams, line by line, through the markup filter: people see the
 * prose, never raw tool-call markup or thinking.
 */
export function createReplyPrinter(log: (line: string) => void) {
  let filter = createStreamFilter();
  let line = "";
  /** Whether any of the reply streamed: its complete message then shows nothing more. */
  let streamed = false;
  /** What of the current reply was shown, and of the last complete one (`lastShown`). */
  let shown = "";
  let lastShown = "";
  const emit = (text: string) => {
    shown += text;
    line += text;
    const parts = line.split("\n");
    line = parts.pop() ?? "";
    for (const p of parts) if (p.trim()) log(`${pc.dim("  │")} ${printable(p)}`);
  };
  return {
    text: (chunk: string) => {
      streamed ||= chunk.length > 0;
      emit(filter.push(chunk));
    },
    /**
     * The reply as one message (a call that did not stream, or the message the turn kept): shown
     * only when none of it streamed.
     */
    whole: (text: string) => {
      if (!streamed) emit(filter.push(text));
    },
    /** The reply is complete: show the rest and start over for the next one. */
    flush: () => {
      emit(filter.end());
      if (line.trim()) log(`${pc.dim("  │")} ${printable(line)}`);
      if (shown.trim()) lastShown = shown.trim();
      line = "";
      shown = "";
      streamed = false;
      filter = createStreamFilter();
    },
    /** The last reply shown in full, trimmed ("" before any). */
    lastShown: () => lastShown,
  };
}
