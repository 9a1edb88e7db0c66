/** Helpers for writing scripted (fake) model behaviour against keel's graphs. */
import type { AnswerReply, ChatView, Script, ScriptedCall } from "./fake-ollama/index.js";

/** A tool call in a scripted reply. */
export const call = (name: string, args: Record<string, unknown> | string = {}): ScriptedCall => ({
  name,
  arguments: args,
});

/** A reply made only of tool calls. */
export const calls = (...c: ScriptedCall[]): AnswerReply => ({ content: "", toolCalls: c });

/** The content of the newest tool result the model is reacting to ("" if none). */
export const lastResult = (req: ChatView): string =>
  req.toolResults[req.toolResults.length - 1]?.content ?? "";

/** The request is keel's forced tool-less summary turn. */
export const isSummaryTurn = (req: ChatView): boolean =>
  Boolean(req.last?.content.startsWith("[keel] The run is being stopped"));

/**
 * Wraps a script of model turns so keel's own calls get valid answers — structured output (intent
 * fallback, plan) and the forced summary turn — leaving `act` to decide only the model's turns.
 */
export function keelScript(
  act: Script,
  opts: { plan?: string[]; intent?: string; summary?: string } = {},
): Script {
  return (req) => {
    if (isSummaryTurn(req))
      return { content: opts.summary ?? "I wrote what I could; the task is not finished." };
    if (req.structured) {
      if (req.formatKeys.includes("steps"))
        return { content: JSON.stringify({ steps: opts.plan ?? ["Do what the request asks"] }) };
      if (req.formatKeys.includes("intent"))
        return { content: JSON.stringify({ intent: opts.intent ?? "build" }) };
      return { content: "{}" };
    }
    return act(req);
  };
}
